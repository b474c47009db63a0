/// <reference lib="webworker" />
/**
 * The propagation worker thread (see controller.ts for the main thread's half). It decides when
 * the embedded data plane's snapshot is rebuilt:
 *
 * - at start: a full sync;
 * - on a NOTIFY on the configuration channel (a management write committed): a revision check at
 *   once — on PostgreSQL the worker LISTENs on its own connection, on PGlite the main thread (the
 *   database's one owner) relays what it hears;
 * - every poll interval: a revision check (the fallback when a notification is lost or disabled);
 * - every drift sweep: the served revision is compared with the desired one and re-applied when
 *   they differ; every Nth sweep is a full sync (rebuilt whatever the revision).
 *
 * The revision number is the truth; notifications only wake. On PostgreSQL the worker also loads
 * the document (its own connection, decrypting with the KEK), so the main thread only builds and
 * swaps; on PGlite it asks the main thread to load. Steps never overlap: wake-ups during a step
 * collapse into one more step.
 */
import type { ConfigDocument } from '../api/config-document.ts';
import { describeError } from '../core/log.ts';
import type { Db } from '../store/db.ts';
import { reconnectBackoff } from '../store/reconnect.ts';
import type { FromWorker, ToWorker, WorkerRequest, WorkerSource, WorkerStatus, WorkerTiming } from './worker-protocol.ts';

declare const self: Worker;

const post = (m: FromWorker): void => self.postMessage(m);

/** A request the main thread has not answered in this long fails (the next tick asks again). */
const ASK_TIMEOUT_MS = 60_000;

let nextId = 1;
const pending = new Map<number, { resolve: (rev: number) => void; reject: (e: Error) => void }>();
const ask = (req: WorkerRequest): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const id = nextId++;
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`the main thread did not answer '${req.op}' within ${ASK_TIMEOUT_MS / 1000} s`));
    }, ASK_TIMEOUT_MS);
    const settle = (f: () => void) => {
      clearTimeout(timer);
      f();
    };
    pending.set(id, { resolve: (rev) => settle(() => resolve(rev)), reject: (e) => settle(() => reject(e)) });
    post({ type: 'request', id, ...req });
  });

interface Source {
  /** A notification applies at once, without a revision check first (PGlite: one round trip less; the load reads the revision anyway). */
  applyOnWake: boolean;
  revision(): Promise<number>;
  apply(force: boolean): Promise<number>;
  close(): Promise<void>;
}

const mainSource = (): Source => ({
  applyOnWake: true,
  revision: () => ask({ op: 'revision' }),
  apply: (force) => ask({ op: 'apply', force }),
  close: async () => undefined,
});

/** PostgreSQL: this thread's own connection (records the same way: records/pg-worker.ts). */
const postgresSource = async (s: Extract<WorkerSource, { kind: 'postgres' }>, listen: boolean, wake: () => void): Promise<Source> => {
  const postgres = (await import('postgres')).default;
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const schema = await import('../store/schema/index.ts');
  const { currentRevision, loadConfigDocument } = await import('./load.ts');
  const { SecretBox } = await import('../core/secrets.ts');
  const { CONFIG_CHANNEL } = await import('./signal.ts');
  // A statement that waits longer than a minute (a lock held by a stuck session, say) fails and the
  // next tick tries again: a step never blocks propagation for good.
  const client = postgres(s.url, {
    max: 2,
    onnotice: () => undefined,
    connect_timeout: 10,
    backoff: reconnectBackoff,
    connection: { statement_timeout: 60_000 },
  });
  const db = drizzle(client, { schema }) as unknown as Db;
  const secrets = new SecretBox(s.kek, s.kekPrevious);
  /** The document this thread loaded last (the next load that is not forced reads only the keys changed since). */
  let last: ConfigDocument | undefined;
  if (listen) {
    // onlisten runs on every (re)connect: a check then covers what was said while disconnected. A
    // LISTEN that cannot start (the database down at start-up) is retried; polling covers the gap.
    const startListening = (): void => {
      client
        .listen(
          CONFIG_CHANNEL,
          () => {
            post({ type: 'moved' });
            wake();
          },
          wake,
        )
        .catch((e: unknown) => {
          status.lastError = `LISTEN failed, retrying in 5 s: ${describeError(e)}`;
          sendStatus();
          setTimeout(startListening, 5_000);
        });
    };
    startListening();
  }
  return {
    applyOnWake: false,
    revision: () => currentRevision(db),
    apply: async (force) => {
      // Not forced: only the keys changed since the last document are read (load.ts).
      const doc = await loadConfigDocument(db, secrets, s.upstreamAllowPrivate, undefined, force ? {} : { previous: last });
      last = doc;
      return ask({ op: 'apply', force, doc });
    },
    close: () => client.end({ timeout: 1 }),
  };
};

const status: WorkerStatus = { lastPollAt: undefined, lastDriftSweepAt: undefined, lastFullSyncAt: undefined, lastError: undefined };
const sendStatus = (): void => post({ type: 'status', status: { ...status } });

/** check: poll tick; wake: a notification; sweep: drift sweep; full: full sync. A stronger want covers a weaker one. */
type Want = 'check' | 'wake' | 'sweep' | 'full';
const RANK: Record<Want, number> = { check: 0, wake: 1, sweep: 2, full: 3 };

let source: Source | undefined;
let applied = -1;
let seen = -1;
let want: Want | undefined;
let running = false;
let timers: ReturnType<typeof setInterval>[] = [];

const step = async (src: Source, w: Want): Promise<void> => {
  if (w === 'wake' && src.applyOnWake) {
    applied = await src.apply(false);
    seen = Math.max(seen, applied);
    return;
  }
  const desired = await src.revision();
  if (desired > seen) {
    if (seen >= 0) post({ type: 'moved' });
    seen = desired;
  }
  if (w === 'sweep') applied = await ask({ op: 'served' });
  if (w === 'full') {
    applied = await src.apply(true);
    status.lastFullSyncAt = Date.now();
  } else if (desired > applied) applied = await src.apply(false);
};

const run = async (): Promise<void> => {
  if (running || !source) return;
  running = true;
  while (want) {
    const w: Want = want;
    want = undefined;
    try {
      await step(source, w);
      status.lastError = undefined;
    } catch (e) {
      // Never the message as it is: a driver error's message may be its statement (core/log.ts).
      status.lastError = describeError(e);
    }
    sendStatus();
  }
  running = false;
};

const request = (w: Want): void => {
  if (!want || RANK[w] > RANK[want]) want = w;
  void run();
};

const start = async (timing: WorkerTiming, listen: boolean, s: WorkerSource): Promise<void> => {
  source = s.kind === 'postgres' ? await postgresSource(s, listen, () => request('wake')) : mainSource();
  let sweeps = 0;
  // The tick times are reported at once (GetConfigStatus shows them even while a step runs).
  const poll = setInterval(() => {
    status.lastPollAt = Date.now();
    sendStatus();
    request('check');
  }, timing.pollMs);
  const sweep = setInterval(() => {
    status.lastDriftSweepAt = Date.now();
    sendStatus();
    sweeps++;
    request(sweeps % timing.fullSyncEvery === 0 ? 'full' : 'sweep');
  }, timing.driftSweepMs);
  timers = [poll, sweep];
  request('full');
};

self.onmessage = (ev: MessageEvent<ToWorker>) => {
  const m = ev.data;
  switch (m.type) {
    case 'start':
      void start(m.timing, m.listen, m.source).catch((e: unknown) => {
        status.lastError = describeError(e);
        sendStatus();
        // Nothing can work without a source: end, and the main thread starts a new worker.
        process.exit(1);
      });
      return;
    case 'notified':
      request('wake');
      return;
    case 'reply': {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.ok) p?.resolve(m.revision);
      else p?.reject(new Error(m.error));
      return;
    }
    case 'stop':
      for (const t of timers) clearInterval(t);
      timers = [];
      void (source?.close() ?? Promise.resolve()).catch(() => undefined).then(() => post({ type: 'stopped' }));
      return;
  }
};
