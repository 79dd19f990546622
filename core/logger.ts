/** The structured JSON logger of every quarry process. */
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

/** A pino logger named after the process role. */
export function createLogger(config: Config, name: string): Logger {
  return pino({ name, level: config.logLevel, base: { pid: process.pid, service: name } });
}
