// `clusterdns ui`: serves the page (src/ui) until SIGINT or SIGTERM.
import { createLogger } from './logger.js';
import type { ClusterFlags } from './options.js';
import { startUi } from '../ui/server.js';
import { untilSignal } from './until-signal.js';

export interface UiFlags extends ClusterFlags {
  listen?: string;
  sseClients?: number;
  httpMaxConnections?: number;
  logLevel: string;
}

export async function ui(flags: UiFlags): Promise<void> {
  const log = createLogger(flags.logLevel, 2);
  const server = await startUi({
    flags,
    log,
    ...(flags.listen !== undefined ? { listen: flags.listen } : {}),
    ...(flags.sseClients !== undefined ? { maxSseClients: flags.sseClients } : {}),
    ...(flags.httpMaxConnections !== undefined ? { httpLimits: { maxConnections: flags.httpMaxConnections } } : {}),
  });
  log.info({ url: server.url }, `clusterdns ui: open ${server.url}`);
  await untilSignal();
  await server.close();
}
