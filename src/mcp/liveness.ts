import { type Counters, MemoryCounters } from '../governance/counters.ts';

/**
 * Whether a 2025-generation session is still alive (contract §7.1): the session id carries the
 * session (mcp/session.ts) but not whether the client ended it or left it idle, so those two facts
 * live in the counters every replica shares (Redis when REDIS_URL is set): `seen` — refreshed by
 * every request, expiring GATEWAY_MCP_SESSION_IDLE after the last — and `ended` after a `DELETE`.
 * Without shared counters each replica knows only what it served: a session it never saw is taken
 * as alive while its id is younger than the idle time (it cannot have been idle that long).
 */
export class SessionLiveness {
  private readonly counters: Counters;

  constructor(
    counters: Counters | undefined,
    private readonly idleMs: () => number,
    private readonly now: () => number = Date.now,
  ) {
    this.counters = counters ?? new MemoryCounters(now);
  }

  private keys(nonce: string): [string, string] {
    return [`mcp:session:${nonce}:seen`, `mcp:session:${nonce}:ended`];
  }

  /** A new session (at `initialize`). */
  async open(nonce: string): Promise<void> {
    await this.touch(nonce);
  }

  /** Whether the session may be served; when it may, its idle time starts again. */
  async alive(nonce: string, issuedSeconds: number): Promise<boolean> {
    const [seen, ended] = this.keys(nonce);
    const [seenCount = 0, endedCount = 0] = await this.counters.read([seen, ended]);
    if (endedCount > 0) return false;
    if (seenCount === 0 && !(this.counters.kind === 'memory' && this.now() - issuedSeconds * 1000 < this.idleMs())) return false;
    await this.touch(nonce);
    return true;
  }

  /** The client ended the session (`DELETE`): refused from now on, on every replica. */
  async end(nonce: string): Promise<void> {
    const [, ended] = this.keys(nonce);
    await this.counters.tryAdd([{ key: ended, add: 1, limit: Number.MAX_SAFE_INTEGER, ttlMs: this.idleMs() }]);
  }

  private async touch(nonce: string): Promise<void> {
    const [seen] = this.keys(nonce);
    await this.counters.tryAdd([{ key: seen, add: 1, limit: Number.MAX_SAFE_INTEGER, ttlMs: this.idleMs() }]);
  }
}
