/** Entry point of the search core process. */
import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startCoreServer } from './server.js';
import { onShutdown } from './shutdown.js';
import { VERSION } from './version.js';

const config = loadConfig();
const logger = createLogger(config, 'core');
const server = await startCoreServer(config, logger, VERSION);
onShutdown(logger, () => server.close(config.shutdownGraceMs));
