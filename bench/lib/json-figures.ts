/**
 * A bench's figures, machine-readable (`--json FILE`): what bench/issue11-goals.ts reads back from
 * each bench it runs as a child. The human-readable output stays what it was; this is written
 * beside it, with the machine and load the figures were taken on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine } from './spawn-stack.js';

/** The value of `--json FILE` in argv, or undefined when it was not given. */
export function jsonArg(argv: readonly string[] = process.argv): string | undefined {
  const i = argv.indexOf('--json');
  if (i < 0) return undefined;
  const file = argv[i + 1];
  if (file === undefined || file.startsWith('--')) throw new Error('--json needs a file name');
  return file;
}

/** Writes `figures` as JSON to `file` (when given), with the bench's name, command line, machine and load at the end. */
export function writeJsonFigures(file: string | undefined, bench: string, figures: Record<string, unknown>): void {
  if (file === undefined) return;
  const doc = {
    bench,
    argv: process.argv.slice(2),
    machine: machine(),
    node: process.version,
    finishedAt: new Date().toISOString(),
    loadAtEnd: os.loadavg(),
    ...figures,
  };
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
}
