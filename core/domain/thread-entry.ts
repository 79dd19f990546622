/** How a worker thread's entry module is started, compiled or from source. */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The script of a worker thread whose entry is `relative` to the module at `fromUrl`, with the
 * caller's own extension: the `.js` file once compiled, or for `.ts` source (tsx, vitest) a small
 * `data:` module that registers tsx and then imports it (Node starts a worker's main module
 * before a loader registered with `--import` can claim a `.ts` file).
 */
export function threadEntry(fromUrl: string, relative: string): string | URL {
  const here = fileURLToPath(fromUrl);
  const ext = path.extname(here);
  const filename = path.resolve(path.dirname(here), `${relative}${ext}`);
  if (ext !== '.ts') return filename;
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = `const { register } = await import(${JSON.stringify(tsx)}); register(); await import(${JSON.stringify(pathToFileURL(filename).href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}

/**
 * Lowers the calling thread's scheduling priority to `nice` (Linux keeps a nice value per
 * thread), so that bulk work in it yields the CPU to the event loops that answer requests.
 * Best effort: 0 or an unsupported platform leaves it as it is.
 */
export function niceThisThread(nice: number): void {
  if (nice <= 0) return;
  try {
    os.setPriority(nice);
  } catch {
    // Not permitted or not supported: run at the default priority.
  }
}
