/** Graceful shutdown on SIGINT/SIGTERM, shared by the process entry points. */
import type { Logger } from 'pino';

/**
 * Runs `stop` once on the first SIGINT/SIGTERM, then exits; a second signal exits at once, and
 * so does a `stop` still running after `graceMs` plus 5 s (a close waiting on a Redis that is
 * gone would otherwise keep the process alive for ever).
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, graceMs = 10_000): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ graceMs }, 'shutdown did not finish within the grace period: exiting now');
      process.exit(1);
    }, graceMs + 5_000).unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
