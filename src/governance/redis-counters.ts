import { RedisClient } from 'bun';
import type { CounterAdd, CounterAdjust, Counters, Refused } from './counters.ts';

/**
 * Counters in Redis (`REDIS_URL`), shared by every data plane. Each operation is one Lua script,
 * so check-and-add is atomic across processes: two data planes never both take the last unit.
 * Scripts are loaded once and called by SHA (EVALSHA), reloaded when the server lost them.
 * Keys of one call are not co-located for Redis Cluster: use a single Redis (or a proxy that
 * keeps them on one node).
 *
 * Errors (connection refused, time-out) reject; the caller decides (GATEWAY_LIMITS_ON_REDIS_ERROR).
 * Bun's client does not reconnect by itself: a call while disconnected starts a new connection.
 */

/** KEYS: counters; ARGV per key: add, limit, ttlMs, orEmpty. Returns {0} or {index (1-based), value}. */
const TRY_ADD = `
for i = 1, #KEYS do
  local v = tonumber(redis.call('GET', KEYS[i]) or '0')
  local a = (i - 1) * 4
  if v + tonumber(ARGV[a + 1]) > tonumber(ARGV[a + 2]) and not (ARGV[a + 4] == '1' and v <= 0) then
    return {i, tostring(v)}
  end
end
for i = 1, #KEYS do
  local a = (i - 1) * 4
  redis.call('INCRBY', KEYS[i], ARGV[a + 1])
  local ttl = tonumber(ARGV[a + 3])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {0}
`;

/** KEYS: counters; ARGV: deltas. Only existing counters are corrected. */
const ADJUST = `
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCRBY', KEYS[i], ARGV[i]) end
end
return 0
`;

const int = (n: number): string => String(Math.trunc(n));

export class RedisCounters implements Counters {
  readonly kind = 'redis' as const;
  private readonly client: RedisClient;
  private readonly shas = new Map<string, string>();
  private connecting: Promise<void> | undefined;

  constructor(url: string, opts: { connectTimeoutMs?: number } = {}) {
    this.client = new RedisClient(url, { connectionTimeout: opts.connectTimeoutMs ?? 2_000, enableOfflineQueue: false, autoReconnect: false });
  }

  private async ready(): Promise<void> {
    if (this.client.connected) return;
    this.connecting ??= this.client.connect().finally(() => {
      this.connecting = undefined;
    });
    await this.connecting;
  }

  private async evalScript(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    await this.ready();
    let sha = this.shas.get(script);
    if (!sha) {
      sha = String(await this.client.send('SCRIPT', ['LOAD', script]));
      this.shas.set(script, sha);
    }
    try {
      return await this.client.send('EVALSHA', [sha, String(keys.length), ...keys, ...args]);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.includes('NOSCRIPT')) throw e;
      this.shas.delete(script);
      return this.client.send('EVAL', [script, String(keys.length), ...keys, ...args]);
    }
  }

  async tryAdd(entries: readonly CounterAdd[]): Promise<Refused | undefined> {
    if (entries.length === 0) return undefined;
    const args: string[] = [];
    for (const e of entries) args.push(int(e.add), int(e.limit), int(e.ttlMs), e.orEmpty ? '1' : '0');
    const r = (await this.evalScript(
      TRY_ADD,
      entries.map((e) => e.key),
      args,
    )) as unknown[];
    const index = Number(r[0]);
    return index === 0 ? undefined : { index: index - 1, value: Number(r[1]) };
  }

  async adjust(entries: readonly CounterAdjust[]): Promise<void> {
    const live = entries.filter((e) => e.delta !== 0);
    if (live.length === 0) return;
    await this.evalScript(
      ADJUST,
      live.map((e) => e.key),
      live.map((e) => int(e.delta)),
    );
  }

  async read(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    await this.ready();
    const r = (await this.client.send('MGET', [...keys])) as (string | null)[];
    return r.map((v) => (v === null ? 0 : Number(v)));
  }

  close(): void {
    this.client.close();
  }
}
