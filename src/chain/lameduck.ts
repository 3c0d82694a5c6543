// An App's shutdown state, kept in the chain so health sets it and ready reads it without either
// importing the other: while health waits out its lameduck period, /ready answers 503 "Shutting
// down" (CoreDNS's ready stops answering OK before the lameduck wait), so load balancers take the
// server out while it still answers DNS. One per App (BlockContext.lameduck): a second App in the
// same process going down leaves this one's /ready alone.
export class Lameduck {
  private holders = 0;

  enter(): void {
    this.holders++;
  }

  leave(): void {
    if (this.holders > 0) this.holders--;
  }

  get active(): boolean {
    return this.holders > 0;
  }
}
