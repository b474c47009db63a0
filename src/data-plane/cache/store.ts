import { RedisClient } from 'bun';
import { describeError, log } from '../../core/log.ts';

/**
 * Where cached answers live (contract §11): this process's memory for the embedded plane, Redis
 * when REDIS_URL is set (shared by every data plane). Keys are built by ./key.ts and always carry
 * the project (and, for scope `api_key`, the key): the store itself knows no tenant. A failing
 * store is a miss, never an error of the request.
 */
export interface ResponseCacheStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | undefined>;
  /** Keeps `value` for `ttlMs`; fire and forget (a failure is logged). */
  set(key: string, value: string, ttlMs: number): void;
  close(): void;
}

interface Entry {
  value: string;
  expiresAt: number;
  bytes: number;
}

/** Bytes an entry is counted for: its UTF-16 text (2 bytes a unit) and key, plus the map's own overhead. */
const sizeOf = (key: string, value: string): number => (key.length + value.length) * 2 + 64;

/**
 * An LRU bounded by bytes: a Map in use order (a hit moves its entry to the end), the oldest
 * evicted first until the new entry fits. An entry larger than 1/16 of the bound is not kept.
 */
export class MemoryResponseCache implements ResponseCacheStore {
  readonly kind = 'memory' as const;
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  get bytes(): number {
    return this.#bytes;
  }
  get size(): number {
    return this.#entries.size;
  }

  get(key: string): Promise<string | undefined> {
    const e = this.#entries.get(key);
    if (!e) return Promise.resolve(undefined);
    this.#entries.delete(key);
    if (e.expiresAt <= this.now()) {
      this.#bytes -= e.bytes;
      return Promise.resolve(undefined);
    }
    this.#entries.set(key, e);
    return Promise.resolve(e.value);
  }

  set(key: string, value: string, ttlMs: number): void {
    const bytes = sizeOf(key, value);
    const old = this.#entries.get(key);
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= old.bytes;
    }
    if (bytes > this.maxBytes / 16) return;
    while (this.#bytes + bytes > this.maxBytes) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      const e = this.#entries.get(oldest.value);
      this.#entries.delete(oldest.value);
      if (e) this.#bytes -= e.bytes;
    }
    this.#entries.set(key, { value, expiresAt: this.now() + ttlMs, bytes });
    this.#bytes += bytes;
  }

  close(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}

/**
 * Answers in Redis (`SET key value PX ttl`), shared by every data plane on it. Redis bounds and
 * evicts by its own `maxmemory` and policy (docs/client-compatibility.md, "Response cache"); entries over `maxEntryBytes` are
 * not written.
 */
export class RedisResponseCache implements ResponseCacheStore {
  readonly kind = 'redis' as const;
  readonly #client: RedisClient;
  #connecting: Promise<void> | undefined;
  constructor(
    url: string,
    private readonly maxEntryBytes: number,
  ) {
    this.#client = new RedisClient(url, { connectionTimeout: 2_000, enableOfflineQueue: false, autoReconnect: false });
  }

  async #ready(): Promise<void> {
    if (this.#client.connected) return;
    this.#connecting ??= this.#client.connect().finally(() => {
      this.#connecting = undefined;
    });
    await this.#connecting;
  }

  async get(key: string): Promise<string | undefined> {
    try {
      await this.#ready();
      const v = await this.#client.get(key);
      return v ?? undefined;
    } catch (e) {
      log.every('response-cache-redis', 'warn', 'reading the response cache in Redis failed; served as a miss', {
        error: describeError(e),
      });
      return undefined;
    }
  }

  set(key: string, value: string, ttlMs: number): void {
    if (value.length * 3 > this.maxEntryBytes && Buffer.byteLength(value) > this.maxEntryBytes) return;
    void this.#ready()
      .then(() => this.#client.send('SET', [key, value, 'PX', String(Math.max(1, Math.trunc(ttlMs)))]))
      .catch((e: unknown) =>
        log.every('response-cache-redis', 'warn', 'writing the response cache in Redis failed', { error: describeError(e) }),
      );
  }

  close(): void {
    this.#client.close();
  }
}

/** The plane's store: Redis when REDIS_URL is set (shared by every data plane), else this process's LRU. */
export const responseCacheStore = (config: { redisUrl: string | undefined; responseCacheMaxBytes: number }): ResponseCacheStore =>
  config.redisUrl
    ? new RedisResponseCache(config.redisUrl, Math.max(1024, Math.floor(config.responseCacheMaxBytes / 16)))
    : new MemoryResponseCache(config.responseCacheMaxBytes);
