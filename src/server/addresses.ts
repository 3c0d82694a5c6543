// Address classification shared by transports and plugins.
import { isIPv4 } from 'node:net';

export function isLoopbackOrUnspecified(address: string): boolean {
  if (isIPv4(address)) return address.startsWith('127.') || address === '0.0.0.0';
  const a = address.toLowerCase().split('%')[0]!;
  return a === '::1' || a === '::' || a.startsWith('::ffff:127.');
}
