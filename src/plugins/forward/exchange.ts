// What every upstream exchange shares, over UDP, TCP or TLS: the error it fails with and the
// check that picks the reply out of what the upstream sends.

export class ExchangeError extends Error {
  constructor(
    readonly upstream: string,
    message: string,
  ) {
    super(`${upstream}: ${message}`);
    this.name = 'ExchangeError';
  }
}

/**
 * Accepts a datagram or TCP message as the reply, or returns undefined to drop it and keep
 * waiting; throwing ends the exchange with that error (a malformed reply).
 */
export type ReplyCheck<T> = (msg: Buffer) => T | undefined;

/** Runs the reply check; an error it throws fails the exchange instead of escaping the socket handler. */
export function checked<T>(label: string, check: ReplyCheck<T>, msg: Buffer, finish: (err: Error | null) => void): T | undefined {
  try {
    return check(msg);
  } catch (err) {
    finish(new ExchangeError(label, (err as Error).message));
    return undefined;
  }
}
