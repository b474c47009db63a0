/// <reference lib="webworker" />
/**
 * The embedded store's owner thread: the only code that runs PGlite (decision 1 of the hot-path
 * issue). The main thread's request path never executes PostgreSQL in WebAssembly, and PGlite's
 * memory (hundreds of MB of WebAssembly heap) is not part of the main thread's JavaScript heap,
 * whose collections it made long and rare (bench/HISTORY.md). Requests arrive as messages
 * (pglite-protocol.ts) and run in arrival order as PGlite itself orders them: a query outside a
 * transaction waits for an open one to end.
 */
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { migrationsFolder, pgliteAssets, registerEmbedded } from './embedded.ts';
import { type OpenPglite, type PgliteReply, type PgliteRequest, toWireError } from './pglite-protocol.ts';

declare const self: Worker;

const post = (m: PgliteReply): void => self.postMessage(m);

let pg: PGlite | undefined;
/** Open transactions by id, each with the way to end it. */
const transactions = new Map<number, { tx: Transaction; end: (commit: boolean) => void; ended: Promise<void> }>();
const listeners = new Map<number, () => Promise<void>>();
let nextId = 1;

/**
 * drizzle's parsers for PGlite (drizzle-orm/pglite/session.js): timestamps, intervals and dates,
 * and arrays of them, stay text. Functions cannot cross threads, so the owner applies them.
 */
const KEEP_TEXT = [1114, 1184, 1186, 1082, 1231, 1115, 1185, 1187, 1182];
const identity = (v: string): string => v;
const parsers = Object.fromEntries(KEEP_TEXT.map((oid) => [oid, identity]));

const open = async (o: OpenPglite): Promise<void> => {
  if (o.embedded) registerEmbedded(o.embedded);
  const { PGlite: Engine } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  const { assertMigrated } = await import('./db.ts');
  const where = o.dataDir === 'memory' ? 'memory://' : join(o.dataDir, 'pg');
  const options = {
    ...(await pgliteAssets()),
    ...(o.sharedBuffersKb ? { postgresqlconf: [`shared_buffers = ${o.sharedBuffersKb}kB`] } : {}),
  };
  if (o.dataDir !== 'memory' && !existsSync(join(where, 'PG_VERSION'))) {
    // A new directory: initdb runs inside PGlite's WebAssembly memory, grows it to ~700 MB, and
    // WebAssembly memory never shrinks. Create and migrate in a first instance, close it (its
    // memory goes with it), and serve from a second one that opens the existing directory.
    mkdirSync(o.dataDir, { recursive: true });
    const init = await Engine.create(where, options);
    await migrate(drizzle({ client: init }), { migrationsFolder: migrationsFolder() });
    await init.close();
  }
  const client = await Engine.create(where, options);
  const db = drizzle({ client });
  try {
    if (o.migrate) await migrate(db, { migrationsFolder: migrationsFolder() });
    else await assertMigrated(db);
  } catch (e) {
    await client.close();
    throw e;
  }
  pg = client;
};

const opened = (): PGlite => {
  if (!pg) throw new Error('PGlite is closed');
  return pg;
};

/** The transaction a request names, or the store itself. */
const on = (tx: number | undefined): PGlite | Transaction => {
  if (tx === undefined) return opened();
  const t = transactions.get(tx);
  if (!t) throw new Error(`transaction ${tx} is not open`);
  return t.tx;
};

class Rollback extends Error {}

/** Opens a transaction and answers once inside it; it stays open until `end` names it. */
const begin = (): Promise<number> =>
  new Promise<number>((answered, refused) => {
    const id = nextId++;
    let end: (commit: boolean) => void = () => undefined;
    const held = new Promise<void>((resolve, reject) => {
      end = (commit) => (commit ? resolve() : reject(new Rollback()));
    });
    const ended = opened()
      .transaction(async (tx) => {
        transactions.set(id, { tx, end, ended });
        answered(id);
        await held;
      })
      .then(
        () => undefined,
        (e: unknown) => {
          if (!(e instanceof Rollback)) throw e;
        },
      )
      .finally(() => transactions.delete(id));
    // A transaction that could not begin refuses the request that asked for it.
    ended.catch(refused);
  });

const handle = async (m: PgliteRequest): Promise<unknown> => {
  switch (m.op) {
    case 'open':
      return open(m.open);
    case 'query': {
      const r = await on(m.tx).query(m.text, m.params, { rowMode: m.rowMode, parsers });
      return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows };
    }
    case 'exec':
      return on(m.tx).exec(m.text, m.blob ? { blob: m.blob } : undefined);
    case 'begin':
      return begin();
    case 'end': {
      const t = transactions.get(m.tx);
      if (!t) throw new Error(`transaction ${m.tx} is not open`);
      t.end(m.commit);
      return t.ended;
    }
    case 'listen': {
      const id = nextId++;
      listeners.set(id, await opened().listen(m.channel, (payload) => post({ notify: id, payload })));
      return id;
    }
    case 'unlisten': {
      const stop = listeners.get(m.listener);
      listeners.delete(m.listener);
      return stop?.();
    }
    case 'close': {
      const client = pg;
      pg = undefined;
      return client?.close();
    }
  }
};

self.onmessage = (ev: MessageEvent<PgliteRequest>) => {
  const m = ev.data;
  handle(m).then(
    (value) => post({ id: m.id, ok: true, value }),
    (e: unknown) => post({ id: m.id, ok: false, error: toWireError(e) }),
  );
};
