import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importPKCS8, SignJWT } from 'jose';
import { ApiError, ManagementClient } from '../../api/client.ts';
import type { ConfigDocument, SealedPull } from '../../api/config-document.ts';
import type { ProtocolInput, ProtocolOutput } from '../../api/dataplane.ts';
import { uuid } from '../../core/ids.ts';
import { describeError, log } from '../../core/log.ts';
import { buildSnapshot } from '../../propagation/build.ts';
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
  readonly status: PullStatus = {
    appliedRevision: -1,
    lastPullAt: undefined,
    lastFullSyncAt: undefined,
    reachable: false,
    refused: undefined,
    lastError: undefined,
    source: 'none',
  };
  #key: Promise<CryptoKey> | undefined;
  #token: { jwt: Promise<string>; renewAt: number } | undefined;
  #timers: ReturnType<typeof setInterval>[] = [];
  #running: Promise<boolean> | undefined;
  readonly #cacheFile: string;
  readonly #stop = new AbortController();
  /**
   * The management plane, as this data plane's service account (a fresh JWT per call, aborted at
   * stop): pulls, record shipping and stored conversations go through it. One attempt per call —
   * each caller has its own retry (the next pull, the record spool, the client's retry).
   */
  readonly client: ManagementClient;

  constructor(
    private readonly sa: ServiceAccountFile,
    private readonly holder: SnapshotHolder,
    private readonly getAdapter: (id: string) => ProviderAdapter | undefined,
    private readonly opts: {
      dataDir: string;
      pollMs: number;
      driftSweepMs: number;
      longPoll?: boolean;
      /** Told every document served (pulled or from the disk cache), after it is: the data plane's own settings in it (exports.ts). */
      onDocument?: (doc: ConfigDocument) => Promise<void>;
    },
  ) {
    this.#cacheFile = join(opts.dataDir, 'config-cache.json');
    this.client = new ManagementClient({
      endpoint: sa.apiUri,
      token: () => this.token(),
      attempts: 1,
      timeoutMs: CALL_TIMEOUT_MS,
      signal: this.#stop.signal,
    });
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
    const req: ProtocolInput<'Pull'> = {
      ...(applied >= 0 ? { knownRevision: String(applied), appliedRevision: String(applied) } : {}),
      full,
      ...(waitSeconds > 0 ? { waitSeconds } : {}),
    };
    let answer: ProtocolOutput<'Pull'>;
    try {
      answer = await this.client.protocol('Pull', req, { timeoutMs: CALL_TIMEOUT_MS + waitSeconds * 1000 });
    } catch (e) {
      return this.#failed(e);
    }
    this.status.lastPullAt = new Date();
    this.#answered();
    if (answer.unchanged) return true;
    try {
      const sealed = await this.#apply(answer);
      if (full) this.status.lastFullSyncAt = new Date();
      this.#writeCache(sealed);
      this.status.lastError = undefined;
    } catch (e) {
      this.#applyFailed(describeError(e));
    }
    return true;
  }

  #answered(): void {
    this.status.reachable = true;
    this.status.refused = undefined;
  }

  #applyFailed(error: string): void {
    this.status.lastError = error;
    log.every('dataplane-apply-failed', 'error', 'applying the pulled configuration failed; still serving the previous one', { error });
  }

  /** A Pull that brought no configuration: refused (401/403), unreachable, or an answer not in the protocol's shape. */
  #failed(e: unknown): boolean {
    if (this.#stop.signal.aborted) return false;
    if (!(e instanceof ApiError) || e.status === 0) {
      this.#unreachable(describeError(e));
      return false;
    }
    this.status.lastPullAt = new Date();
    if (e.status === 401 || e.status === 403) {
      this.status.reachable = true;
      this.status.refused = e.detail.message ?? `refused (${e.status})`;
      log.every(
        'dataplane-refused',
        'error',
        'the management plane refused this data plane’s service account; serving the last configuration',
        { reason: this.status.refused, ...(e.detail.reason ? { why: e.detail.reason } : {}) },
        60_000,
      );
      return false;
    }
    if (e.status !== 200) {
      this.#unreachable(`management plane answered ${e.status}`);
      return false;
    }
    // Answered, but not with a configuration this version reads (or with a secret not sealed).
    this.#answered();
    this.#applyFailed(e.message);
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
    await this.opts.onDocument?.(doc).catch((e: unknown) =>
      log.every('dataplane-own-settings', 'error', 'applying the data plane’s own settings of the pulled configuration failed', {
        error: describeError(e),
      }),
    );
    return sealed;
  }

  #unreachable(error: string): void {
    this.status.reachable = false;
    this.status.lastError = error;
    log.every(
      'dataplane-unreachable',
      'warn',
      'the management plane is unreachable; serving the last configuration',
      { error, revision: this.status.appliedRevision },
      30_000,
    );
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
