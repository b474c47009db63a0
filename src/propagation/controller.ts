import type { SecretBox } from '../core/secrets.ts';
import { describeError, log } from '../core/log.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import type { Db, Store } from '../store/db.ts';
import { buildSnapshot } from './build.ts';
import type { ConfigDocument } from '../api/config-document.ts';
import type { SnapshotHolder } from './holder.ts';
import { currentRevision, loadConfigDocument } from './load.ts';
import { CONFIG_CHANNEL, ChangeSignal } from './signal.ts';
import type { FromWorker, ToWorker, WorkerRequest, WorkerTiming } from './worker-protocol.ts';

export interface ControllerStatus {
  /** The revision served (-1 before the first snapshot). */
  appliedRevision: number;
  lastPollAt: Date | undefined;
  lastDriftSweepAt: Date | undefined;
  lastFullSyncAt: Date | undefined;
  lastError: string | undefined;
  /** Notifications are listened to (WORKER_LISTEN); polling is the fallback either way. */
  listen: boolean;
  /** Workers that failed and were replaced since start. */
  workerRestarts: number;
}

export interface ControllerOptions {
  /** The main thread's database (PGlite: its one owner; PostgreSQL: the management plane's pool). */
  store: Pick<Store, 'db' | 'listen'>;
  secrets: SecretBox;
  upstreamAllowPrivate: boolean;
  /** PostgreSQL: the worker opens its own connection with this URL and the KEK(s). */
  postgres?: { url: string; kek: string; kekPrevious: string[] };
  timing: WorkerTiming;
  /** LISTEN for committed changes (WORKER_LISTEN); false: polling only. */
  listen: boolean;
}

/** Pause before a failed worker is replaced. */
const RESTART_DELAY_MS = 500;

/**
 * The embedded data plane's propagation controller, main-thread half. The decisions (poll, drift
 * sweep, full sync, LISTEN on PostgreSQL) are made in a worker thread (worker.ts); this half answers
 * its requests: the snapshot is built and swapped here, where the request path reads the holder
 * (a snapshot holds adapter functions, which cannot cross threads). With PGlite the document is
 * also loaded here (the database has one owner) and NOTIFY is heard here and relayed to the worker.
 *
 * A management write never waits for any of it: it commits, NOTIFYs and returns. `settled()` waits
 * for the snapshot to catch up with the revision committed so far (tests, benchmarks).
 *
 * A worker that fails (an uncaught error, an exit) is logged and replaced.
 */
export class SnapshotController {
  readonly status: ControllerStatus;
  /** Fired when the revision may have moved; the pull protocol's held calls wait on it. */
  readonly signal = new ChangeSignal();
  #worker: Worker | undefined;
  #stopping = false;
  #unlisten: (() => Promise<void>) | undefined;
  #restart: ReturnType<typeof setTimeout> | undefined;
  /** The document last loaded here (PGlite): the next load that is not forced reads only what changed since (load.ts). */
  #doc: ConfigDocument | undefined;

  constructor(
    private readonly opts: ControllerOptions,
    private readonly holder: SnapshotHolder,
    private readonly getAdapter: (id: string) => ProviderAdapter | undefined,
  ) {
    this.status = {
      appliedRevision: -1,
      lastPollAt: undefined,
      lastDriftSweepAt: undefined,
      lastFullSyncAt: undefined,
      lastError: undefined,
      listen: opts.listen,
      workerRestarts: 0,
    };
  }

  /** Serves the first snapshot (built here, so start-up never depends on the worker), then starts the worker. */
  async start(): Promise<void> {
    await this.#apply(true, undefined);
    const listen = this.opts.store.listen;
    if (this.opts.listen && !this.opts.postgres && listen) {
      this.#unlisten = await listen(CONFIG_CHANNEL, () => {
        this.signal.fire();
        this.#send({ type: 'notified' });
      });
    }
    this.#spawn();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.signal.close();
    if (this.#restart) clearTimeout(this.#restart);
    await this.#unlisten?.().catch(() => undefined);
    const w = this.#worker;
    this.#worker = undefined;
    if (!w) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 2_000);
      w.addEventListener('message', (ev: MessageEvent<FromWorker>) => {
        if (ev.data.type === 'stopped') {
          clearTimeout(t);
          resolve();
        }
      });
      w.postMessage({ type: 'stop' } satisfies ToWorker);
    });
    w.terminate();
  }

  /**
   * Resolves once the served snapshot's revision reaches the newest committed one (read now);
   * rejects after `timeoutMs`. At once when stopped.
   */
  async settled(timeoutMs = 10_000): Promise<number> {
    if (this.#stopping) return this.holder.current?.revision ?? -1;
    const want = await currentRevision(this.opts.store.db);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const served = this.holder.current?.revision ?? -1;
      if (served >= want) return served;
      if (Date.now() > deadline) throw new Error(`the embedded data plane serves revision ${served}, not ${want}, after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, 50);
        const off = this.holder.onSwap(done);
        function done() {
          clearTimeout(t);
          off();
          resolve();
        }
      });
    }
  }

  /** The worker currently running (tests replace a failed one through it). */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  #send(m: ToWorker): void {
    this.#worker?.postMessage(m);
  }

  #spawn(): void {
    const w = new Worker(new URL('./worker.ts', import.meta.url).href);
    (w as Worker & { unref?(): void }).unref?.();
    this.#worker = w;
    w.addEventListener('message', (ev: MessageEvent<FromWorker>) => void this.#onMessage(w, ev.data));
    w.addEventListener('error', (ev: ErrorEvent) => this.#failed(w, ev.message || 'uncaught error'));
    w.addEventListener('close', () => this.#failed(w, 'the thread ended'));
    const { postgres } = this.opts;
    w.postMessage({
      type: 'start',
      timing: this.opts.timing,
      listen: this.opts.listen,
      source: postgres ? { kind: 'postgres', ...postgres, upstreamAllowPrivate: this.opts.upstreamAllowPrivate } : { kind: 'main' },
    } satisfies ToWorker);
  }

  #failed(w: Worker, why: string): void {
    if (w !== this.#worker || this.#stopping) return;
    this.#worker = undefined;
    this.status.workerRestarts++;
    log.error('the propagation worker failed; starting a new one', { error: why, restarts: this.status.workerRestarts });
    w.terminate();
    this.#restart = setTimeout(() => {
      this.#restart = undefined;
      if (!this.#stopping) this.#spawn();
    }, RESTART_DELAY_MS);
  }

  async #onMessage(w: Worker, m: FromWorker): Promise<void> {
    if (w !== this.#worker) return;
    switch (m.type) {
      case 'moved':
        this.signal.fire();
        return;
      case 'status': {
        const s = m.status;
        const at = (n: number | undefined, prev: Date | undefined) => (n === undefined ? prev : new Date(n));
        this.status.lastPollAt = at(s.lastPollAt, this.status.lastPollAt);
        this.status.lastDriftSweepAt = at(s.lastDriftSweepAt, this.status.lastDriftSweepAt);
        this.status.lastFullSyncAt = at(s.lastFullSyncAt, this.status.lastFullSyncAt);
        if (s.lastError !== undefined && s.lastError !== this.status.lastError) {
          log.every('propagation-failed', 'error', 'propagating the configuration failed; still serving the previous snapshot', {
            error: s.lastError,
          });
        }
        this.status.lastError = s.lastError;
        return;
      }
      case 'request': {
        try {
          const revision = await this.#answer(m);
          w.postMessage({ type: 'reply', id: m.id, ok: true, revision } satisfies ToWorker);
        } catch (e) {
          w.postMessage({ type: 'reply', id: m.id, ok: false, error: describeError(e) } satisfies ToWorker);
        }
        return;
      }
      case 'stopped':
        return;
    }
  }

  #answer(r: WorkerRequest): Promise<number> {
    if (r.op === 'revision') return currentRevision(this.opts.store.db);
    if (r.op === 'served') return Promise.resolve(this.holder.current?.revision ?? -1);
    return this.#apply(r.force, r.doc);
  }

  /** Builds and swaps a snapshot (loading the document here when none is given); returns the revision served. */
  async #apply(force: boolean, given: ConfigDocument | undefined): Promise<number> {
    const doc =
      given ??
      (await loadConfigDocument(
        this.opts.store.db as Db,
        this.opts.secrets,
        this.opts.upstreamAllowPrivate,
        undefined,
        force ? {} : { previous: this.#doc },
      ));
    if (!given) this.#doc = doc;
    const served = this.holder.current?.revision ?? -1;
    if (force || doc.revision > served) this.holder.swap(buildSnapshot(doc, this.getAdapter));
    this.status.appliedRevision = this.holder.current?.revision ?? -1;
    // Held Pulls of separate data planes wake on every revision this plane moves to, whoever noticed
    // it (a NOTIFY, a poll, a fresh worker's first sync): a wake-up never depends on one path alone.
    if (this.status.appliedRevision > served) this.signal.fire();
    return this.status.appliedRevision;
  }
}
