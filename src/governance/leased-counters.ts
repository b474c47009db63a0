import { describeError, log } from '../core/log.ts';
import type { CounterAdd, CounterAdjust, Counters, Refused } from './counters.ts';

/**
 * Shared counters with local leases: a data plane takes a block of a counter's units from the
 * shared counters (Redis) in one atomic admission and admits later requests from it without a
 * round trip, while the counter is far from its limit.
 *
 * Exactness (contract §3.2) holds because a lease IS an admission: its units are added to the
 * shared counter when it is taken, so the sum of what every data plane admits never passes a limit,
 * whatever the number of planes. What a lease changes is only when units count as used: the block's
 * unused units read as spent (GetBudget's `spentUsd`, which counts in-flight reservations already)
 * until they are given back — at the lease's end (LEASE_MS after it was taken or last topped up) or
 * at close(). To keep refusals exact near a limit:
 *
 * - a lease is LEASE_REQUESTS times the admission that asked for it, and is taken only while it
 *   leaves at least HEADROOM leases' worth of the limit free (the script checks it atomically, as
 *   `limit - HEADROOM × size`), and never for a limit under MIN_LIMIT_LEASES leases: small limits
 *   (the tests' 7 requests per minute, a budget of a few requests) are admitted one by one, exactly
 *   as without leases, and so are the other counters of admissions that have one;
 * - near a limit no lease is taken, so the refusals there are the shared counter's own; what other
 *   planes hold then is at most what they took while the limit was far, for at most LEASE_MS;
 * - an admission that the leases cannot serve whole (an entry without a lease, or not enough left)
 *   goes to the shared counters as one atomic group, as without leases (`orEmpty`, one large
 *   request in an empty window, is decided there; an admission a lease covers fits anyway).
 *
 * A lease is topped up (another block, same rules) once less than half a block is left, while the
 * admissions go on being served from what is left: under load a key's admissions never wait for
 * Redis while it is far from its limit.
 *
 * Settlements (reservation → real use) of a key with a live lease are applied to the lease (units
 * freed go back to it; units over the reservation are taken from it, and what it lacks goes to the
 * shared counter); others go to the shared counters. A lease's units are the key's: it does not
 * matter which admission's reservation they came from.
 */

/** A lease is this many times the admission that asked for it. */
export const LEASE_REQUESTS = 32;
/** A lease is taken only while this many more leases' worth stays free under the limit. */
export const HEADROOM = 3;
/** No lease for a limit under this many leases. */
export const MIN_LIMIT_LEASES = 16;
/** A lease's unused units are given back this long after it was taken. */
export const LEASE_MS = 1_000;

interface Lease {
  /** Units taken and not yet used. */
  left: number;
  expiresAt: number;
  /** The limit it was taken under: a lowered limit (a configuration change) is not served from it. */
  limit: number;
}

/** Whether the entry's limit is large enough for leases of its size. */
const leasable = (e: CounterAdd): boolean => e.add > 0 && e.limit >= e.add * LEASE_REQUESTS * MIN_LIMIT_LEASES;

export class LeasedCounters implements Counters {
  readonly #inner: Counters;
  readonly #now: () => number;
  readonly #leases = new Map<string, Lease>();
  /** Keys whose lease is being taken (one request at a time per key). */
  readonly #taking = new Set<string>();
  /** Keys near their limit (a lease was refused): no lease is asked for again before this time. */
  readonly #refusedUntil = new Map<string, number>();
  /** Leases being taken, awaited by close() so that none is left out of the give-back. */
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #timer: ReturnType<typeof setInterval>;
  #closed = false;

  constructor(inner: Counters, opts: { now?: () => number } = {}) {
    this.#inner = inner;
    this.#now = opts.now ?? Date.now;
    this.#timer = setInterval(() => this.giveBack(false), LEASE_MS / 4);
    this.#timer.unref?.();
  }

  get kind(): Counters['kind'] {
    return this.#inner.kind;
  }

  /** Units held by live leases, by key (tests, diagnostics). */
  get held(): ReadonlyMap<string, number> {
    return new Map([...this.#leases].map(([k, l]) => [k, l.left]));
  }

  tryAdd(entries: readonly CounterAdd[]): Refused | undefined | Promise<Refused | undefined> {
    if (entries.length === 0 || this.#closed) return this.#inner.tryAdd(entries);
    const now = this.#now();
    const covering = this.#covering(entries, now);
    if (covering) {
      for (const c of covering) c.lease.left -= c.add;
      // Two entries of one key could need more than its lease holds together: then undo, and ask Redis.
      if (covering.every((c) => c.lease.left >= 0)) {
        // Topped up before it runs out: the admissions meanwhile are still served from it.
        for (const e of entries) this.#take(e, now);
        return undefined;
      }
      for (const c of covering) c.lease.left += c.add;
    }
    const result = this.#inner.tryAdd(entries);
    // Asked after the admission: the shared counters take it first (one script call, in order).
    // Only when every entry can be leased: an admission with a small limit among its entries always
    // goes to Redis, and a lease of its other keys would sit unused.
    if (entries.every(leasable)) for (const e of entries) this.#take(e, now);
    return result;
  }

  /** The live lease of each entry's key, in order, when every one covers its entry alone. */
  #covering(entries: readonly CounterAdd[], now: number): { lease: Lease; add: number }[] | undefined {
    const out: { lease: Lease; add: number }[] = [];
    for (const e of entries) {
      const lease = this.#leases.get(e.key);
      if (lease === undefined || lease.expiresAt <= now || lease.left < e.add || e.limit < lease.limit) return undefined;
      out.push({ lease, add: e.add });
    }
    return out;
  }

  /** Takes a lease for the entry's key when its limit is far enough (the shared counter decides, atomically). */
  #take(e: CounterAdd, now: number): void {
    const size = e.add * LEASE_REQUESTS;
    if (this.#taking.has(e.key)) return;
    const refused = this.#refusedUntil.get(e.key);
    if (refused !== undefined) {
      if (refused > now) return;
      this.#refusedUntil.delete(e.key);
    }
    const held = this.#leases.get(e.key);
    // Enough left (half a lease or more), or being taken: nothing to do.
    if (held && held.expiresAt > now && held.left * 2 >= size && e.limit >= held.limit) return;
    this.#taking.add(e.key);
    const done = (r: Refused | undefined): void => {
      this.#taking.delete(e.key);
      const at = this.#now();
      if (r) {
        // Near the limit: the admissions go to Redis one by one; a lease is asked for again later.
        this.#refusedUntil.set(e.key, at + LEASE_MS / 4);
        return;
      }
      const l = this.#leases.get(e.key);
      // What an ended lease still held goes back with it (giveBack), not into the new one.
      if (l && l.expiresAt > at && l.limit === e.limit) {
        l.left += size;
        l.expiresAt = at + LEASE_MS;
      } else {
        if (l) this.#returnLease(e.key, l);
        this.#leases.set(e.key, { left: size, expiresAt: at + LEASE_MS, limit: e.limit });
      }
    };
    const failed = (err: unknown): void => {
      this.#taking.delete(e.key);
      log.every(
        'limits-lease',
        'warn',
        'taking a lease of a shared counter failed; admitting one by one',
        { error: describeError(err) },
        10_000,
      );
    };
    try {
      const r = this.#inner.tryAdd([{ key: e.key, add: size, limit: e.limit - HEADROOM * size, ttlMs: e.ttlMs }]);
      if (r instanceof Promise) {
        const p = r.then(done, failed);
        this.#inFlight.add(p);
        void p.finally(() => this.#inFlight.delete(p));
      } else done(r);
    } catch (err) {
      failed(err);
    }
  }

  adjust(entries: readonly CounterAdjust[]): void | Promise<void> {
    const now = this.#now();
    const rest: CounterAdjust[] = [];
    for (const e of entries) {
      const l = this.#leases.get(e.key);
      if (!l || l.expiresAt <= now || this.#closed) {
        rest.push(e);
        continue;
      }
      // Freed units (delta < 0) go back to the lease; use over the reservation is taken from it.
      l.left -= e.delta;
      if (l.left < 0) {
        rest.push({ key: e.key, delta: -l.left });
        l.left = 0;
      }
    }
    return rest.length === 0 ? undefined : this.#inner.adjust(rest);
  }

  read(keys: readonly string[]): number[] | Promise<number[]> {
    return this.#inner.read(keys);
  }

  /** Gives back the unused units of ended leases (all of them when `all`). */
  giveBack(all: boolean): void | Promise<void> {
    const now = this.#now();
    const back: CounterAdjust[] = [];
    for (const [key, until] of this.#refusedUntil) if (until <= now) this.#refusedUntil.delete(key);
    for (const [key, l] of this.#leases) {
      if (!all && l.expiresAt > now) continue;
      this.#leases.delete(key);
      if (l.left > 0) back.push({ key, delta: -l.left });
    }
    return back.length === 0 ? undefined : this.#settle(back);
  }

  #returnLease(key: string, l: Lease): void {
    if (l.left > 0) void this.#settle([{ key, delta: -l.left }]);
  }

  #settle(back: readonly CounterAdjust[]): Promise<void> {
    const failed = (err: unknown): void =>
      log.every(
        'limits-lease-return',
        'warn',
        'giving back unused leased units failed; they count as used until their counter ends',
        { error: describeError(err) },
        10_000,
      );
    try {
      return Promise.resolve(this.#inner.adjust(back)).catch(failed);
    } catch (err) {
      failed(err);
      return Promise.resolve();
    }
  }

  /** Gives every lease back, then closes the shared counters (which send what is queued first). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.allSettled([...this.#inFlight]);
    await this.giveBack(true);
    await this.#inner.close();
  }
}
