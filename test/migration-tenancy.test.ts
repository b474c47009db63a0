import { afterAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { Db } from '../src/store/db.ts';
import { testDatabase, type TestDatabase } from './support/db.ts';
import { settled } from './support/settled.ts';

/**
 * Migration 0001 (children point at their parent's row id) on a store that already holds rows
 * written under 0000, with a deleted tenant, its re-created slug and the orphans the old race left:
 * every child is attached to the parent it was created under, orphans of deleted parents get the
 * cascade they missed, and nothing of the old tenant is attached to the new one.
 */

const ROOT = join(import.meta.dir, '..', 'drizzle');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A migrations folder holding only 0000. */
const onlyInit = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-mig-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'meta'));
  cpSync(join(ROOT, '0000_init.sql'), join(dir, '0000_init.sql'));
  cpSync(join(ROOT, 'meta', '0000_snapshot.json'), join(dir, 'meta', '0000_snapshot.json'));
  const journal = JSON.parse(readFileSync(join(ROOT, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.filter((e) => e.tag === '0000_init');
  writeFileSync(join(dir, 'meta', '_journal.json'), JSON.stringify(journal));
  return dir;
};

interface Handle {
  db: Db;
  migrate(folder: string): Promise<void>;
  close(): Promise<void>;
}

const open = async (tdb: TestDatabase): Promise<Handle> => {
  if (!tdb.url) {
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    const client = await PGlite.create('memory://');
    const db = drizzle(client);
    return { db: db as unknown as Db, migrate: (f) => migrate(db, { migrationsFolder: f }), close: () => client.close() };
  }
  const postgres = (await import('postgres')).default;
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  const client = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const db = drizzle(client);
  return { db: db as unknown as Db, migrate: (f) => migrate(db, { migrationsFolder: f }), close: () => client.end({ timeout: 5 }) };
};

const rows = async (db: Db, q: string): Promise<Record<string, unknown>[]> => {
  const r = (await db.execute(sql.raw(q))) as unknown;
  return (Array.isArray(r) ? r : (r as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[];
};

const OLD_C = '00000000-0000-4000-8000-000000000001';
const NEW_C = '00000000-0000-4000-8000-000000000002';
const OLD_P = '00000000-0000-4000-8000-000000000011';
const NEW_P = '00000000-0000-4000-8000-000000000012';

describe('migration 0001 on a store with 0000 rows', () => {
  test(`backfills parent ids, cascades over old orphans, attaches nothing old to the new tenant (${process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'})`, async () => {
    const tdb = await testDatabase();
    const h = await open(tdb);
    try {
      await h.migrate(onlyInit());
      const t0 = "'2030-01-01T00:00:00Z'";
      const tDel = "'2030-01-01T01:00:00Z'";
      const t1 = "'2030-01-01T02:00:00Z'";
      for (const stmt of [
        `insert into customers (id, customer_id, created_at, deleted_at) values ('${OLD_C}', 'acme', ${t0}, ${tDel}), ('${NEW_C}', 'acme', ${t1}, null)`,
        // the old default project was cascaded; the new one is live
        `insert into projects (id, customer_id, project_id, created_at, deleted_at) values ('${OLD_P}', 'acme', 'default', ${t0}, ${tDel}), ('${NEW_P}', 'acme', 'default', ${t1}, null)`,
        // an orphan of the old race: created just before the delete, left live
        `insert into api_keys (key_hash, key_prefix, key_address, customer_id, project_id, created_at) values ('old-orphan', 'sk-o', 'a', 'acme', 'default', ${tDel})`,
        `insert into api_keys (key_hash, key_prefix, key_address, customer_id, project_id, created_at) values ('new-key', 'sk-n', 'a', 'acme', 'default', ${t1})`,
        `insert into provider_connections (customer_id, project_id, name, provider, created_at) values ('acme', 'default', 'old-conn', 'echo', ${tDel}), ('acme', 'default', 'new-conn', 'echo', ${t1})`,
        `insert into routes (customer_id, project_id, model, targets, created_at) values ('acme', 'default', 'm', '[]', ${tDel})`,
        `insert into project_members (customer_id, project_id, user_id, role, created_at) values ('acme', 'default', 'old-user', 'admin', ${tDel}), ('acme', 'default', 'new-user', 'admin', ${t1})`,
        `insert into project_settings (customer_id, project_id, setting_name, setting_value, created_at) values ('acme', 'default', 'rate-limit', '1/s', ${t1})`,
        `insert into dataplanes (customer_id, slug, created_at) values ('acme', 'dp-old', ${tDel}), ('acme', 'dp-new', ${t1})`,
        `insert into user_tokens (jti, user_id, customer_id, workspace_id, organization_unit, role, created_at, expires_at) values ('j-old', 'u', 'acme', 'w', 'o', 'r', ${t0}, '2031-01-01T00:00:00Z')`,
        // a row with no parent of its slug at all is unreachable
        `insert into project_models (customer_id, project_id, model_id) values ('ghost', 'default', gen_random_uuid())`,
      ])
        await rows(h.db, stmt);

      await h.migrate(ROOT);

      const keys = await rows(h.db, 'select key_hash, project_uuid, revoked_at from api_keys order by key_hash');
      expect(keys.map((k) => [k.key_hash, k.project_uuid, k.revoked_at !== null])).toEqual([
        ['new-key', NEW_P, false],
        ['old-orphan', OLD_P, true],
      ]);
      const conns = await rows(h.db, 'select name, project_uuid, deleted_at from provider_connections order by name');
      expect(conns.map((c) => [c.name, c.project_uuid, c.deleted_at !== null])).toEqual([
        ['new-conn', NEW_P, false],
        ['old-conn', OLD_P, true],
      ]);
      expect((await rows(h.db, 'select deleted_at from routes'))[0]?.deleted_at).not.toBeNull();
      expect((await rows(h.db, 'select user_id, project_uuid from project_members')).map((m) => [m.user_id, m.project_uuid])).toEqual([
        ['new-user', NEW_P],
      ]);
      expect((await rows(h.db, 'select project_uuid from project_settings'))[0]?.project_uuid).toBe(NEW_P);
      const planes = await rows(h.db, 'select slug, customer_uuid, project_uuid, deleted_at from dataplanes order by slug');
      expect(planes.map((d) => [d.slug, d.customer_uuid, d.project_uuid, d.deleted_at !== null])).toEqual([
        ['dp-new', NEW_C, NEW_P, false],
        ['dp-old', OLD_C, OLD_P, true],
      ]);
      const tokens = await rows(h.db, 'select customer_uuid, revoked_at from user_tokens');
      expect(tokens.map((x) => [x.customer_uuid, x.revoked_at !== null])).toEqual([[OLD_C, true]]);
      expect(await rows(h.db, 'select * from project_models')).toEqual([]);
      expect((await rows(h.db, 'select customer_uuid from projects order by created_at')).map((p) => p.customer_uuid)).toEqual([
        OLD_C,
        NEW_C,
      ]);
      // the columns are NOT NULL foreign keys now
      await expect(
        (
          await settled(
            rows(
              h.db,
              `insert into routes (project_uuid, customer_id, project_id, model, targets) values (gen_random_uuid(), 'x', 'y', 'm', '[]')`,
            ),
          )
        ).promise,
      ).rejects.toThrow();
      await expect(
        (await settled(rows(h.db, `insert into routes (customer_id, project_id, model, targets) values ('x', 'y', 'm', '[]')`))).promise,
      ).rejects.toThrow();
    } finally {
      await h.close();
      await tdb.drop();
    }
  }, 60_000);
});
