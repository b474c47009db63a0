import { afterAll, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config/env.ts';
import { currentRevision } from '../src/propagation/load.ts';
import { openStore } from '../src/store/db.ts';
import { customers } from '../src/store/schema/index.ts';

/**
 * The embedded store in a data directory, as the gateway runs it: a new directory is initialised
 * and migrated in a first PGlite instance that is then closed (initdb's ~700 MB of WebAssembly
 * memory go with it), and served from a second one with the configured shared_buffers.
 */

const dir = mkdtempSync(join(tmpdir(), 'gw-store-dir-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const setting = async (s: Awaited<ReturnType<typeof openStore>>, name: string): Promise<string> => {
  const rows = (await s.db.execute(sql.raw(`show ${name}`))) as unknown as { rows?: Record<string, string>[] } | Record<string, string>[];
  const list = Array.isArray(rows) ? rows : (rows.rows ?? []);
  return String(Object.values(list[0] ?? {})[0]);
};

test('a new directory is created, migrated and served with the configured shared_buffers; data survives a reopen', async () => {
  const first = await openStore({ driver: 'pglite', dataDir: dir, sharedBuffersKb: 16384 });
  expect(existsSync(join(dir, 'pg', 'PG_VERSION'))).toBe(true);
  expect(await setting(first, 'shared_buffers')).toBe('16MB');
  expect(await currentRevision(first.db)).toBe(0);
  await first.db.insert(customers).values({ customerId: 'kept' });
  await first.close();

  const second = await openStore({ driver: 'pglite', dataDir: dir, sharedBuffersKb: 8192 });
  expect(await setting(second, 'shared_buffers')).toBe('8MB');
  const rows = await second.db.select({ id: customers.customerId }).from(customers);
  expect(rows.map((r) => r.id)).toEqual(['kept']);
  await second.close();
}, 180_000);

test('GATEWAY_PGLITE_SHARED_BUFFERS: 32 MiB by default, sizes accepted, nonsense and out-of-range refused naming the setting', () => {
  expect(loadConfig([], {}).pgliteSharedBuffersKb).toBe(32768);
  expect(loadConfig([], { GATEWAY_PGLITE_SHARED_BUFFERS: '128MiB' }).pgliteSharedBuffersKb).toBe(131072);
  for (const bad of ['lots', '512KiB', '5GiB', '-1']) {
    expect(() => loadConfig([], { GATEWAY_PGLITE_SHARED_BUFFERS: bad })).toThrow(/GATEWAY_PGLITE_SHARED_BUFFERS/);
  }
});
