import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Migration tests: a migrations folder cut at one migration, and a handle on either driver that applies one. */

export const ROOT = join(import.meta.dir, '..', '..', 'drizzle');
const dirs: string[] = [];
/** Removes the folders upTo made (a test file's afterAll). */
export const removeMigrationFolders = (): void => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
};

/** A migrations folder holding the migrations up to `last` (its tag). */
export const upTo = (last: string): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-mig-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'meta'));
  const journal = JSON.parse(readFileSync(join(ROOT, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  const end = journal.entries.findIndex((e) => e.tag === last);
  journal.entries = journal.entries.slice(0, end + 1);
  for (const e of journal.entries) cpSync(join(ROOT, `${e.tag}.sql`), join(dir, `${e.tag}.sql`));
  for (const f of readdirSync(join(ROOT, 'meta'))) if (f.endsWith('_snapshot.json')) cpSync(join(ROOT, 'meta', f), join(dir, 'meta', f));
  writeFileSync(join(dir, 'meta', '_journal.json'), JSON.stringify(journal));
  return dir;
};

export interface MigrationHandle {
  migrate(folder: string): Promise<void>;
  query(q: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export const openMigrationHandle = async (url: string | undefined): Promise<MigrationHandle> => {
  if (!url) {
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    const client = await PGlite.create('memory://');
    const db = drizzle(client);
    return {
      migrate: (f) => migrate(db, { migrationsFolder: f }),
      query: async (q) => (await client.query<Record<string, unknown>>(q)).rows,
      close: () => client.close(),
    };
  }
  const postgres = (await import('postgres')).default;
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  const client = postgres(url, { max: 1, onnotice: () => {} });
  const db = drizzle(client);
  return {
    migrate: (f) => migrate(db, { migrationsFolder: f }),
    query: async (q) => [...(await client.unsafe<Record<string, unknown>[]>(q))],
    close: () => client.end({ timeout: 5 }),
  };
};
