/**
 * The parsed rows that the inputs of one process hold in memory at once, in rowBytes (see
 * holdMaxBytes). Channels bound how many inputs they take at once, but uploads are as many as the
 * HTTP server's connections: past this budget an input is parsed twice instead of held.
 */
export class HoldBudget {
  private inUse = 0;

  constructor(readonly maxBytes: number) {}

  /** Takes `bytes` more and says true, or takes nothing and says false when that would pass the budget. */
  take(bytes: number): boolean {
    if (this.inUse + bytes > this.maxBytes) return false;
    this.inUse += bytes;
    return true;
  }

  give(bytes: number): void {
    this.inUse -= bytes;
  }
}

/** Four inputs at holdMaxBytes each. */
export const defaultHoldBudgetBytes = 64 * 1024 * 1024;
