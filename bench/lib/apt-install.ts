/** Debian packages a benchmark needs, installed when missing (as deploy/redis.sh installs Redis). */
import { spawnSync } from 'node:child_process';

/**
 * Installs Debian packages with apt-get (update, then install -y; as root, or through sudo),
 * output kept in memory and its tail printed on failure. Returns null when done, else why not.
 */
export function aptInstall(packages: readonly string[]): string | null {
  if (spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) return `apt-get is not available; install ${packages.join(' ')} yourself`;
  const asRoot = process.getuid?.() === 0;
  if (!asRoot && spawnSync('sh', ['-c', 'command -v sudo']).status !== 0) return `not root and no sudo: apt-get install -y ${packages.join(' ')}`;
  const run = (args: string[]) => {
    const cmd = asRoot ? 'env' : 'sudo';
    const r = spawnSync(cmd, [...(asRoot ? [] : ['env']), 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: r.status === 0, log: `${r.stdout ?? ''}${r.stderr ?? ''}` };
  };
  console.log(`installing ${packages.join(' ')} with apt-get...`);
  // A fresh machine has empty package lists: update first, as deploy/redis.sh does.
  for (const step of [['update', '-q'], ['install', '-y', '-q', ...packages]]) {
    const r = run(step);
    if (!r.ok) {
      console.error(r.log.split('\n').slice(-30).join('\n'));
      return `apt-get ${step[0]} failed (output above)`;
    }
  }
  return null;
}
