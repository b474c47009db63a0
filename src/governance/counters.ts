/**
 * Shared counters for rate limits and budget reservations (contract §1, "Shared counters"). One
 * interface, two implementations: in process (`MemoryCounters`, one data plane) and Redis
 * (`RedisCounters`, every data plane sharing `REDIS_URL`, atomic through Lua scripts).
 *
 * All amounts are integers (requests, tokens, nano-USD), so sums are exact.
 */

export interface CounterAdd {
  key: string;
  /** What to add (≥ 0). */
  add: number;
  /** The counter may not exceed this after the addition. */
  limit: number;
  /** The counter's lifetime from now (ms); 0 keeps it. */
  ttlMs: number;
  /** Admit even past the limit while the counter is still at 0 (one large request in an empty window). */
  orEmpty?: boolean;
}

export interface CounterAdjust {
  key: string;
  delta: number;
}

/** A refusal: which entry did not fit, and the counter's value then. */
export interface Refused {
  index: number;
  value: number;
}

export interface Counters {
  readonly kind: 'memory' | 'redis';
  /**
   * Atomically: when every entry fits, adds them all and returns undefined; otherwise adds
   * nothing and returns the first entry that did not fit.
   */
  tryAdd(entries: readonly CounterAdd[]): Refused | undefined | Promise<Refused | undefined>;
  /** Adds (possibly negative) corrections to counters that still exist; an expired one stays gone. */
  adjust(entries: readonly CounterAdjust[]): void | Promise<void>;
  /** Current values (0 for a missing counter). */
  read(keys: readonly string[]): number[] | Promise<number[]>;
  /** Applies what is still queued (Redis coalesces calls), then releases the counters. */
  close(): void | Promise<void>;
}

interface Cell {
  value: number;
  /** Epoch ms, or Infinity. */
  expiresAt: number;
}

/** One process's counters: synchronous, so admission costs no await. */
export class MemoryCounters implements Counters {
  readonly kind = 'memory' as const;
  private readonly cells = new Map<string, Cell>();
  private sweptAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  private get(key: string, now: number): Cell | undefined {
    const c = this.cells.get(key);
    if (c && c.expiresAt <= now) {
      this.cells.delete(key);
      return undefined;
    }
    return c;
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [k, c] of this.cells) if (c.expiresAt <= now) this.cells.delete(k);
  }

  tryAdd(entries: readonly CounterAdd[]): Refused | undefined {
    const now = this.now();
    this.sweep(now);
    for (const [index, e] of entries.entries()) {
      const value = this.get(e.key, now)?.value ?? 0;
      if (value + e.add > e.limit && !(e.orEmpty && value <= 0)) return { index, value };
    }
    for (const e of entries) {
      const c = this.get(e.key, now);
      const expiresAt = e.ttlMs > 0 ? now + e.ttlMs : Number.POSITIVE_INFINITY;
      if (c) {
        c.value += e.add;
        c.expiresAt = expiresAt;
      } else this.cells.set(e.key, { value: e.add, expiresAt });
    }
    return undefined;
  }

  adjust(entries: readonly CounterAdjust[]): void {
    const now = this.now();
    for (const e of entries) {
      const c = this.get(e.key, now);
      if (c) c.value += e.delta;
    }
  }

  read(keys: readonly string[]): number[] {
    const now = this.now();
    return keys.map((k) => this.get(k, now)?.value ?? 0);
  }

  close(): void {
    this.cells.clear();
  }
}
