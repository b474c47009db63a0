import { type SQL, sql } from 'drizzle-orm';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { PGlite as PGliteClient } from '@electric-sql/pglite';
import { embeddedFiles, migrationsFolder } from './embedded.ts';
import { reconnectBackoff } from './reconnect.ts';
import * as schema from './schema/index.ts';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Store {
  db: Db;
  driver: 'pglite' | 'postgres';
  /**
   * LISTEN on the embedded PGlite (its own thread relays what it hears to this one; stack-notes
   * §3). Undefined on PostgreSQL: there a thread with its own connection listens (propagation/worker.ts).
   */
  listen?: (channel: string, onNotify: (payload: string) => void) => Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** `sharedBuffers`: PGlite's `shared_buffers` in kB (PostgreSQL's own default, 128 MB, when absent). */
export type StoreTarget =
  | { driver: 'pglite'; dataDir: string | 'memory'; sharedBuffersKb?: number }
  | { driver: 'postgres'; url: string /** GATEWAY_DB_POOL_MAX (default 10). */; poolMax?: number };

export interface OpenOptions {
  /** false (GATEWAY_MIGRATE=0): apply nothing, refuse to open while a migration is pending. Default true. */
  migrate?: boolean;
}

/** The newest migration drizzle/ holds (its journal's `when`, which drizzle records as `created_at`). */
const newestMigration = (): number => {
  const journal: unknown = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8'));
  const entries =
    typeof journal === 'object' && journal !== null && 'entries' in journal && Array.isArray(journal.entries) ? journal.entries : [];
  return entries.reduce(
    (max: number, e: unknown) =>
      typeof e === 'object' && e !== null && 'when' in e && typeof e.when === 'number' ? Math.max(max, e.when) : max,
    0,
  );
};

/** What the check needs of either driver's drizzle database. */
interface Executes {
  execute(query: SQL): Promise<unknown>;
}

/** PGlite answers `{rows}`, postgres.js an array of rows. */
const firstRow = (r: unknown): unknown =>
  Array.isArray(r) ? r[0] : typeof r === 'object' && r !== null && 'rows' in r && Array.isArray(r.rows) ? r.rows[0] : undefined;

/** Throws unless every migration of drizzle/ was applied (by `gateway migrate` or a gateway with GATEWAY_MIGRATE=1). */
export const assertMigrated = async (db: Executes): Promise<void> => {
  let applied = 0;
  try {
    const row = firstRow(await db.execute(sql`select max(created_at) as last from drizzle.__drizzle_migrations`));
    applied = typeof row === 'object' && row !== null && 'last' in row ? Number(row.last ?? 0) : 0;
  } catch {
    applied = 0; // no migrations table: nothing was ever applied
  }
  if (applied < newestMigration())
    throw new Error(
      "the database schema is behind this version and GATEWAY_MIGRATE=0: run `gateway migrate` (the chart's migrations Job) first",
    );
};

/**
 * Opens the store and runs migrations. The driver is chosen explicitly by the caller: PGlite in a
 * data directory (or in memory, for tests) or postgres.js. Unused drivers are never loaded.
 */
export const openStore = async (target: StoreTarget, opts: OpenOptions = {}): Promise<Store> => {
  const migrateOr = async (db: Executes, run: () => Promise<void>): Promise<void> => (opts.migrate === false ? assertMigrated(db) : run());
  if (target.driver === 'pglite') {
    // PGlite runs in its own thread (store/pglite-worker.ts), which opens and migrates it.
    const { PgliteRemote } = await import('./pglite-remote.ts');
    const { drizzle } = await import('drizzle-orm/pglite');
    const client = await PgliteRemote.open(
      {
        dataDir: target.dataDir,
        migrate: opts.migrate !== false,
        ...(target.sharedBuffersKb ? { sharedBuffersKb: target.sharedBuffersKb } : {}),
      },
      embeddedFiles(),
    );
    const db = drizzle({ client: client as unknown as PGliteClient, schema });
    return {
      db: db as unknown as Db,
      driver: 'pglite',
      listen: (channel, onNotify) => client.listen(channel, onNotify),
      close: () => client.close(),
    };
  }
  const postgres = (await import('postgres')).default;
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  // Reconnect back-off capped at 1 s: a query fails within about a second while the server is down
  // (503 on the management API), and service resumes as quickly.
  const client = postgres(target.url, { max: target.poolMax ?? 10, onnotice: () => {}, connect_timeout: 10, backoff: reconnectBackoff });
  const db = drizzle(client, { schema });
  try {
    await migrateOr(db, () => migrate(db, { migrationsFolder: migrationsFolder() }));
  } catch (e) {
    await client.end({ timeout: 1 });
    throw e;
  }
  return { db: db as unknown as Db, driver: 'postgres', close: () => client.end({ timeout: 5 }) };
};
