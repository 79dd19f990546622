/**
 * The embedded blob store's signing key when QUARRY_BLOB_SECRET is not set: 32 random bytes made
 * once in `<dataDir>/blob-secret` and read by every process after. The facade that presigns and
 * the facade that receives (after a restart, or another process on the same data dir) must agree,
 * so the file is published atomically: written whole under a name of its own (opened with `wx`,
 * mode 0600), fsynced, then hard-linked to its final name, which fails with EEXIST when another
 * process got there first; that process's key is then read and used. A reader never sees a file
 * that is half written.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Name of the key file under the data dir. */
export const BLOB_SECRET_FILE = 'blob-secret';

const isErrno = (err: unknown, code: string): boolean => (err as NodeJS.ErrnoException | null)?.code === code;

/** Reads the data dir's key, creating it first when absent. */
export async function dataDirBlobSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, BLOB_SECRET_FILE);
  try {
    return await readSecret(file);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  await fs.mkdir(dataDir, { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  const handle = await fs.open(draft, 'wx', 0o600);
  try {
    await handle.writeFile(randomBytes(32).toString('hex'));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.link(draft, file);
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
  } finally {
    await fs.rm(draft, { force: true });
  }
  return readSecret(file);
}

async function readSecret(file: string): Promise<string> {
  const text = (await fs.readFile(file, 'utf8')).trim();
  // A key this short was not made here (someone edited the file): refuse rather than sign with it.
  if (text.length < 32) throw new Error(`${file} holds fewer than 32 characters; remove it to have a new key made, or set QUARRY_BLOB_SECRET`);
  return text;
}
