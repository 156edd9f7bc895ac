/** A counting semaphore: at most `concurrency` tasks run at once, the rest wait in FIFO order. */
export class Limiter {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly concurrency: number) {
    if (!(concurrency >= 1)) throw new RangeError(`concurrency must be at least 1, got ${concurrency}`);
  }

  get running(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}
