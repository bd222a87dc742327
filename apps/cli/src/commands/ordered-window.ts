/**
 * Runs work with a bound on what runs at once (count and bytes) and hands the results back in the
 * order the work was added. A finished result waits for those before it without holding a place:
 * one slow input (a large report on the parse worker) does not stop the others from starting, as
 * a window that waited for its oldest did.
 */
export interface OrderedWindowLimits {
  /** Work running at once. */
  running: number;
  /** Bytes of the work running at once (work larger than this runs alone). */
  runningBytes: number;
  /** Finished results waiting for an earlier one, past which adding waits too. */
  waiting: number;
}

interface Slot<T, M> {
  result: Promise<T>;
  meta: M;
  finished: boolean;
}

export class OrderedWindow<T, M> {
  private readonly slots: Slot<T, M>[] = [];
  private running = 0;
  private runningBytes = 0;
  private wake: (() => void) | null = null;

  /** `deliver` is called with each result (or its failure), in the order the work was added. */
  constructor(
    private readonly limits: OrderedWindowLimits,
    private readonly deliver: (result: Promise<T>, meta: M) => Promise<void>,
  ) {}

  /** Starts `work` once there is room for it, delivering what finished meanwhile. */
  async add(bytes: number, meta: M, work: () => Promise<T>): Promise<void> {
    while (this.running > 0 && !this.roomFor(bytes)) {
      await this.someFinished();
      await this.deliverFinished();
    }
    this.running++;
    this.runningBytes += bytes;
    let result: Promise<T>;
    try {
      result = work();
    } catch (error) {
      // Delivered in its turn like any failure, and its place given back.
      result = Promise.reject(error);
    }
    const slot: Slot<T, M> = { result, meta, finished: false };
    this.slots.push(slot);
    // Delivered when its turn comes; this handler also keeps a failure from counting as unhandled.
    void result
      .catch(() => {})
      .finally(() => {
        slot.finished = true;
        this.running--;
        this.runningBytes -= bytes;
        this.wake?.();
      });
    await this.deliverFinished();
  }

  /** Waits for all the work and delivers the rest. */
  async drain(): Promise<void> {
    while (this.slots.length > 0) {
      const slot = this.slots.shift()!;
      await this.deliver(slot.result, slot.meta);
    }
  }

  /** Waits for all the work without delivering it (when giving up part way). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.slots.map((slot) => slot.result));
  }

  private roomFor(bytes: number): boolean {
    const waiting = this.slots.length - this.running;
    return (
      this.running < this.limits.running &&
      this.runningBytes + bytes <= this.limits.runningBytes &&
      waiting < this.limits.waiting
    );
  }

  private someFinished(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        resolve();
      };
    });
  }

  private async deliverFinished(): Promise<void> {
    while (this.slots[0]?.finished) {
      const slot = this.slots.shift()!;
      await this.deliver(slot.result, slot.meta);
    }
  }
}
