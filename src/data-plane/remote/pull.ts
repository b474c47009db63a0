import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importPKCS8, SignJWT } from 'jose';
import { uuid } from '../../core/ids.ts';
import { describeError, log } from '../../core/log.ts';
import { buildSnapshot } from '../../propagation/build.ts';
import type { SealedPull } from '../../api/config-document.ts';
import type { SnapshotHolder } from '../../propagation/holder.ts';
import { openPull } from '../../propagation/seal.ts';
import type { ProviderAdapter } from '../../providers/types.ts';
import type { ServiceAccountFile } from './service-account-file.ts';

/** Lifetime of the JWT signed for each call to the management plane. */
const TOKEN_LIFETIME_S = 120;
const CALL_TIMEOUT_MS = 10_000;
/** How long a held Pull waits for a change (`waitSeconds`; the management plane holds at most 30). */
export const PULL_WAIT_S = 20;

export interface PullStatus {
  /** The revision served (-1 before the first configuration). */
  appliedRevision: number;
  lastPullAt: Date | undefined;
  lastFullSyncAt: Date | undefined;
  /** The management plane answered the last call. */
  reachable: boolean;
  /** Set when the management plane refused the account (revoked, expired, unknown). */
  refused: string | undefined;
  lastError: string | undefined;
  /** Where the configuration served came from. */
  source: 'none' | 'management-plane' | 'disk-cache';
}

/**
 * The controller of a separate data plane: pulls its configuration from the management plane
 * (contract §5) at start (full sync) and on every drift sweep (full), reporting the revision it
 * serves. Between them, with `longPoll` (WORKER_LISTEN, the default) one Pull is always held open
 * (`waitSeconds`): the management plane answers it as soon as a change for this data plane commits,
 * so a change is served in milliseconds without frequent polling; a failed call is retried every
 * poll interval (at most 5 s). Without `longPoll`, it pulls every poll interval (only a revision
 * check unless it moved). The last good document is kept on disk (GATEWAY_DATA_DIR/config-cache.json)
 * sealed as it came (`SealedPull`: every secret sealed for this account, so the file cannot hold a
 * plaintext secret), so a restart while the management plane is away serves the last configuration.
 * A document with a secret not sealed is refused, neither served nor kept.
 */
export class PullController {
  readonly status: PullStatus = { appliedRevision: -1, lastPullAt: undefined, lastFullSyncAt: undefined, reachable: false, refused: undefined, lastError: undefined, source: 'none' };
  #key: Promise<CryptoKey> | undefined;
  #token: { jwt: Promise<string>; renewAt: number } | undefined;
  #timers: ReturnType<typeof setInterval>[] = [];
  #running: Promise<boolean> | undefined;
  readonly #cacheFile: string;
  readonly #stop = new AbortController();

  constructor(
    private readonly sa: ServiceAccountFile,
    private readonly holder: SnapshotHolder,
    private readonly getAdapter: (id: string) => ProviderAdapter | undefined,
    private readonly opts: { dataDir: string; pollMs: number; driftSweepMs: number; longPoll?: boolean },
  ) {
    this.#cacheFile = join(opts.dataDir, 'config-cache.json');
  }

  /**
   * A short-lived RS256 JWT for the management plane, re-used until half its lifetime has passed
   * (calls on the request path, such as stored conversations, do not pay for a signature each).
   */
  token(): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    if (this.#token && now < this.#token.renewAt) return this.#token.jwt;
    const jwt = this.#sign(now);
    this.#token = { jwt, renewAt: now + TOKEN_LIFETIME_S / 2 };
    jwt.catch(() => {
      if (this.#token?.jwt === jwt) this.#token = undefined;
    });
    return jwt;
  }

  async #sign(now: number): Promise<string> {
    this.#key ??= importPKCS8(this.sa.privateKey, 'RS256');
    return new SignJWT({ scope: 'dataplane' })
      .setProtectedHeader({ alg: 'RS256', kid: this.sa.privateKeyId, typ: 'JWT' })
      .setIssuer(this.sa.issuer)
      .setSubject(this.sa.clientEmail)
      .setAudience(this.sa.audience)
      .setJti(uuid())
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_LIFETIME_S)
      .sign(await this.#key);
  }

  /** POSTs to the management plane with a current token. */
  async call(path: string, body: string, timeoutMs = CALL_TIMEOUT_MS): Promise<Response> {
    return fetch(`${this.sa.apiUri}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await this.token()}`, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), this.#stop.signal]),
    });
  }

  async start(): Promise<void> {
    await this.pull(true);
    if (!this.holder.current) await this.#loadCache();
    const sweep = setInterval(() => void this.pull(true), this.opts.driftSweepMs);
    this.#timers = [sweep];
    if (this.opts.longPoll) void this.#hold();
    else this.#timers.push(setInterval(() => void this.pull(false), this.opts.pollMs));
    for (const t of this.#timers) t.unref?.();
  }

  stop(): void {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    this.#stop.abort();
  }

  /** One pull (coalesced with one already running). `full` asks for the whole document whatever the revision. */
  pull(full: boolean): Promise<boolean> {
    this.#running ??= this.#pull(full || !this.holder.current, 0).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Keeps one held Pull open while running (not coalesced: a full pull may run beside it). */
  async #hold(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const answered = await this.#pull(!this.holder.current, this.holder.current ? PULL_WAIT_S : 0);
      if (!answered) await this.#pause(Math.min(this.opts.pollMs, 5_000));
    }
  }

  #pause(ms: number): Promise<void> {
    const stop = this.#stop.signal;
    if (stop.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        stop.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      stop.addEventListener('abort', done);
    });
  }

  /** Resolves true when the management plane answered 200. */
  async #pull(full: boolean, waitSeconds: number): Promise<boolean> {
    const applied = this.status.appliedRevision;
    const req = JSON.stringify({ ...(applied >= 0 ? { knownRevision: String(applied), appliedRevision: String(applied) } : {}), full, ...(waitSeconds > 0 ? { waitSeconds } : {}) });
    let res: Response;
    try {
      res = await this.call('/dataplane.v1.DataplaneService/Pull', req, CALL_TIMEOUT_MS + waitSeconds * 1000);
    } catch (e) {
      if (!this.#stop.signal.aborted) this.#unreachable(describeError(e));
      return false;
    }
    this.status.lastPullAt = new Date();
    const text = await res.text().catch(() => '');
    if (res.status === 401 || res.status === 403) {
      const why = safeJson(text);
      this.status.reachable = true;
      this.status.refused = typeof why?.message === 'string' ? why.message : `refused (${res.status})`;
      log.every('dataplane-refused', 'error', 'the management plane refused this data plane’s service account; serving the last configuration', { reason: this.status.refused }, 60_000);
      return false;
    }
    if (res.status !== 200) {
      this.#unreachable(`management plane answered ${res.status}`);
      return false;
    }
    this.status.reachable = true;
    this.status.refused = undefined;
    try {
      const body: unknown = JSON.parse(text);
      if (isUnchanged(body)) return true;
      const sealed = await this.#apply(body);
      if (full) this.status.lastFullSyncAt = new Date();
      this.#writeCache(sealed);
      this.status.lastError = undefined;
    } catch (e) {
      this.status.lastError = describeError(e);
      log.every('dataplane-apply-failed', 'error', 'applying the pulled configuration failed; still serving the previous one', { error: this.status.lastError });
    }
    return true;
  }

  /** Opens a pulled (or cached) answer and serves it; resolves what may be kept on disk. */
  async #apply(body: unknown): Promise<SealedPull> {
    const { sealed, doc } = await openPull(body, this.sa.privateKey);
    const current = this.holder.current;
    // A full sync at the same revision replaces the snapshot (drift repair); an older one never does.
    if (current && doc.revision < current.revision) return sealed;
    this.holder.swap(buildSnapshot(doc, this.getAdapter));
    this.status.appliedRevision = doc.revision;
    return sealed;
  }

  #unreachable(error: string): void {
    this.status.reachable = false;
    this.status.lastError = error;
    log.every('dataplane-unreachable', 'warn', 'the management plane is unreachable; serving the last configuration', { error, revision: this.status.appliedRevision }, 30_000);
  }

  #writeCache(sealed: SealedPull): void {
    try {
      writeFileSync(`${this.#cacheFile}.tmp`, JSON.stringify(sealed), { mode: 0o600 });
      renameSync(`${this.#cacheFile}.tmp`, this.#cacheFile);
      this.status.source = 'management-plane';
    } catch (e) {
      log.every('dataplane-cache', 'warn', 'could not keep the configuration on disk', { error: describeError(e) });
    }
  }

  async #loadCache(): Promise<void> {
    if (!existsSync(this.#cacheFile)) return;
    try {
      const kept: unknown = JSON.parse(readFileSync(this.#cacheFile, 'utf8'));
      await this.#apply(kept);
      this.status.source = 'disk-cache';
      log.warn('serving the configuration kept on disk until the management plane answers', { revision: this.status.appliedRevision });
    } catch (e) {
      // Unusable — possibly kept by an earlier version with secrets not sealed: removed, never served.
      rmSync(this.#cacheFile, { force: true });
      log.error('the configuration kept on disk is unusable; removed', { error: describeError(e) });
    }
  }
}

const isUnchanged = (body: unknown): boolean => typeof body === 'object' && body !== null && 'unchanged' in body && body.unchanged === true;

const safeJson = (text: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};
