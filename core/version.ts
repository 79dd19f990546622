/** The build version, read once from package.json. */
import fs from 'node:fs';
import { CORE_PROTO } from './rpc/proto.js';
import path from 'node:path';

/** Version string of this build. */
export const VERSION: string = (() => {
  try {
    const root = path.resolve(path.dirname(CORE_PROTO), '..', '..', '..');
    return (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();
