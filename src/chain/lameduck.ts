// Process-wide shutdown state, kept in the chain so health sets it and ready reads it without
// either importing the other: while health waits out its lameduck period, /ready answers 503
// "Shutting down" (CoreDNS's ready stops answering OK before the lameduck wait), so load
// balancers take the server out while it still answers DNS.
let lameduck = 0;

export function enterLameduck(): void {
  lameduck++;
}

export function leaveLameduck(): void {
  if (lameduck > 0) lameduck--;
}

export function inLameduck(): boolean {
  return lameduck > 0;
}
