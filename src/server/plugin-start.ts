// Starting the plugins that open listeners of their own (health :8080, ready :8181 and
// prometheus :9153 in the built-in Corefile): a line at start says what each opened, and a
// failure names the Corefile directive that opened it and how to move it, since a busy :8080 is
// common on a laptop and "address already in use" alone does not say which setting is at fault.
import type { Logger } from 'pino';
import type { Plugin } from '../chain/plugin.js';

/** Path each HTTP plugin serves, and an address to suggest when its own is taken. */
const HTTP_PLUGINS: Readonly<Record<string, { path: string; example: string }>> = {
  health: { path: '/health', example: 'health :8086' },
  ready: { path: '/ready', example: 'ready :8182' },
  prometheus: { path: '/metrics', example: 'prometheus :9154' },
};

interface HttpAddressLike {
  text: string;
  port: number;
}

function httpAddressOf(p: Plugin): HttpAddressLike | undefined {
  if (!(p.name in HTTP_PLUGINS)) return undefined;
  const a = (p as { address?: unknown }).address as Partial<HttpAddressLike> | undefined;
  return a && typeof a.text === 'string' && typeof a.port === 'number' ? (a as HttpAddressLike) : undefined;
}

/** `err` with the directive that opened the address and the fix, for an HTTP plugin. */
function explained(err: unknown, p: Plugin, corefile: string | undefined): unknown {
  const http = HTTP_PLUGINS[p.name];
  const addr = httpAddressOf(p);
  if (!http || !addr || !(err instanceof Error)) return err;
  const fix = corefile
    ? `it is opened by the \`${p.name}\` line of ${corefile}: give it another address (e.g. \`${http.example}\`) or remove the line`
    : `it is opened by \`${p.name}\` in the built-in Corefile (used without --conf; it opens health :8080, ready :8181 and prometheus :9153): free the port, or run with --conf and a Corefile whose ${p.name} line has another address (e.g. \`${http.example}\`) or none`;
  return new Error(`${err.message}; ${fix}`, { cause: err });
}

/**
 * Starts `p`. A plugin that opens an HTTP listener is logged with its address when `log` is
 * given and that address was not logged yet (`logged` holds those seen, as several server
 * blocks share one :9153); its failure names the directive and the fix.
 */
export async function startPlugin(p: Plugin, corefile: string | undefined, log?: Logger, logged?: Set<string>): Promise<void> {
  if (!p.start) return;
  try {
    await p.start();
  } catch (err) {
    throw explained(err, p, corefile);
  }
  const addr = httpAddressOf(p);
  if (!addr || !log || !logged) return;
  const key = `${p.name} ${addr.text}`;
  if (logged.has(key)) return;
  logged.add(key);
  log.info({ plugin: p.name, address: addr.text, path: HTTP_PLUGINS[p.name]!.path }, 'listening on HTTP');
}
