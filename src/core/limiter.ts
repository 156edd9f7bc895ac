/**
 * A counting semaphore: at most `concurrency` tasks run at once; waiting tasks start lowest priority
 * number first, then in arrival order. Long jobs give each unit of work (a question) its position as
 * priority (see `withPriority`), so that earlier questions finish first and free the pipeline for new
 * ones instead of all questions advancing in lockstep and finishing together in a long, idle tail.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const priorityStore = new AsyncLocalStorage<number>();

/** Runs `fn` with a priority that limiters see for every task started inside it (lower runs first). */
export function withPriority<T>(priority: number, fn: () => Promise<T>): Promise<T> {
  return priorityStore.run(priority, fn);
}

/**
 * The priority of the `index`-th of `total` units of work run `inFlight` at a time: its index, so that
 * earlier units finish first while later ones wait to start, except that the last `inFlight` units —
 * those running once nothing is left to start — share one priority and advance together. Ordered by
 * index, they would finish one after another, and the last ones' own chains of dependent calls (a
 * search tree's rounds, an episode's turns) would run nearly alone at the end, leaving the server idle.
 */
export function drainPriority(index: number, total: number, inFlight: number): number {
  return Math.min(index, Math.max(0, total - inFlight));
}

export function currentPriority(): number {
  return priorityStore.getStore() ?? 0;
}

interface Waiter {
  priority: number;
  seq: number;
  resolve: () => void;
}

/**
 * A counting semaphore with priorities (the scheduling described above): at most `concurrency` tasks run
 * at once, waiting ones start lowest priority number first, then in arrival order.
 */
export class Limiter {
  private active = 0;
  private seq = 0;
  private readonly heap: Waiter[] = [];

  constructor(readonly concurrency: number) {
    if (!(concurrency >= 1)) throw new RangeError(`concurrency must be at least 1, got ${concurrency}`);
  }

  get running(): number {
    return this.active;
  }

  get waiting(): number {
    return this.heap.length;
  }

  private less(a: Waiter, b: Waiter): boolean {
    return a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq);
  }

  private push(w: Waiter): void {
    const h = this.heap;
    h.push(w);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Waiter | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }

  /**
   * Runs `task` once a slot is free (lower `priority` first; by default the one set by `withPriority`)
   * and frees the slot when the task settles.
   */
  async run<T>(task: () => Promise<T>, priority = currentPriority()): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.push({ priority, seq: this.seq++, resolve }));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.pop()?.resolve();
    }
  }
}
