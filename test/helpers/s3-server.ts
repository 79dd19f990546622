/**
 * An S3-compatible server for tests: @20minutes/s3rver (the maintained fork of s3rver) in a
 * process of its own on a free loopback port, its objects in a temp dir. It checks SigV4
 * signatures (header and presigned, expiry included) against its one account and serves Range
 * GETs, so the S3 blob store is tested against the wire protocol rather than a mock.
 *
 * Usage: `const s3 = await startS3Server()`, give `s3.env` to `loadConfig`, `await s3.stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The account s3rver knows (its fixed default credentials). */
export const S3_TEST_ACCESS_KEY = 'S3RVER';
/** Secret key of {@link S3_TEST_ACCESS_KEY}. */
export const S3_TEST_SECRET_KEY = 'S3RVER';

/** A running test S3 server. */
export interface S3Server {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** The S3_* environment that points quarry's config at it (bucket `quarry-test`). */
  readonly env: Record<string, string>;
  /** Kills the server and removes its data. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The child's program: listen on port 0 (no race for a free port) and print the port once bound.
 * CommonJS, so that it can `require` the package from this checkout's node_modules.
 *
 * One fix to s3rver's SigV4 check: it signs a bucket-level path as "/bucket", while the AWS SDK
 * v3 sends (and signs) "/bucket/" in path style, so HeadBucket and CreateBucket always failed
 * with SignatureDoesNotMatch. Object paths ("/bucket/key", every presigned URL) are untouched.
 * And it encodes query values for the signature with encodeURIComponent, which leaves !'()* as
 * they are where SigV4 (and the SDK) percent-encode them (RFC 3986): a presigned GET whose
 * response-content-disposition holds "filename*=UTF-8''..." never matched. The child is only this
 * server, so its encodeURIComponent is made the RFC 3986 one.
 */
const PROGRAM = `
const encode = encodeURIComponent;
globalThis.encodeURIComponent = (text) => encode(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const v4 = require('@20minutes/s3rver/lib/signature/v4.js');
const stringToSign = v4.getStringToSign;
v4.getStringToSign = (request, signature) =>
  stringToSign(/^\\/[^/]+$/.test(request.uri) ? { ...request, uri: request.uri + '/' } : request, signature);
const S3rver = require('@20minutes/s3rver');
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: process.argv[1] });
server.run().then((address) => process.stdout.write('listening ' + address.port + '\\n'), (err) => {
  process.stderr.write(String(err && err.stack || err) + '\\n');
  process.exit(1);
});
`;

/** Starts the server; resolves once it listens. */
export async function startS3Server(): Promise<S3Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-s3-'));
  const child: ChildProcess = spawn(process.execPath, ['-e', PROGRAM, dir], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const kill = (): void => {
    child.kill('SIGKILL');
  };
  // A test worker that dies must not leave the server behind.
  process.once('exit', kill);
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`s3rver did not start within 20 s:\n${output}`)), 20_000);
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited (${code}) before listening:\n${output}`));
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    env: {
      S3_ENDPOINT: endpoint,
      S3_BUCKET: 'quarry-test',
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY: S3_TEST_ACCESS_KEY,
      S3_SECRET_KEY: S3_TEST_SECRET_KEY,
      S3_FORCE_PATH_STYLE: 'true',
    },
    stop() {
      stopped ??= (async () => {
        process.off('exit', kill);
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGTERM');
          const timer = setTimeout(kill, 5000);
          await exited;
          clearTimeout(timer);
        }
        fs.rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
