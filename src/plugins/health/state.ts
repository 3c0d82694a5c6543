// Process-wide shutdown state shared by health and ready: while health waits out its lameduck
// period, /ready answers 503 "Shutting down" (CoreDNS's ready stops answering OK before the
// lameduck wait), so load balancers take the server out while it still answers DNS.
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
