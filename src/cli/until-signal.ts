// The wait of commands that run until stopped (`sync --watch`, `ui`): their listeners and
// watchers are unref'd, so something must keep the process alive until SIGINT or SIGTERM.

/** Resolves at the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const keep = setInterval(() => undefined, 1 << 30);
    const stop = (): void => {
      clearInterval(keep);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
