/**
 * Standalone: CPU µs per request record of one embedded COPY batch (PGlite in a data directory),
 * by the indexes on the table, in interleaved rounds (median shown). Each variant is a copy of
 * request_records' columns with only the named indexes; rows carry UUIDv7 ids (as the gateway's),
 * 10 % of them a client request id, 20 API keys, bodies beside the row (`bodies_at`).
 *   bun bench/records-indexes.ts [rounds=14] [rows-per-batch=500]
 *
 * Measured on the shared 2-core machine (2026-11-26, session 9; four runs — this machine's speed
 * moved 2× between them, so read each run across its own row): no index 6.1–11.8 µs/row; the
 * four indexes of the table before migration 0011 add 5.2–9.3 (primary key 1.9–3.2, received_at,
 * client_request_id and (api_key_id, received_at) ~0.5–3.6 each); the partial client id index of
 * 0011 (`where client_request_id is not null`, most requests carry none) against the full one,
 * alone: 15.9 → (not run), 13.1 → 11.7, 8.5 → 8.2, 10.6 → 11.5; the whole table: 17.2 → 15.8,
 * 11.3 → 10.9, 13.3 → 13.7 — a gain of ~1 µs/row at best, inside this machine's noise (kept: the
 * index is smaller on PostgreSQL too). A BRIN index on received_at instead of the btree was slower
 * (22.9 against 21.1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COPY_SQL, entryCsv, entryOf } from '../src/records/entry.ts';
import { openStore } from '../src/store/db.ts';
import { pgliteOf } from '../src/store/pglite.ts';
import { sampleRecordRow } from './lib/record-sample.ts';

const ROUNDS = Number(process.argv[2] ?? 14);
const BATCH = Number(process.argv[3] ?? 500);
const PK = 'alter table X add primary key (request_id)';
const variants: Record<string, string[]> = {
  no_index: [],
  pk: [PK],
  pk_time: [PK, 'create index on X (received_at)'],
  pk_client: [PK, 'create index on X (client_request_id)'],
  pk_client_partial: [PK, 'create index on X (client_request_id) where client_request_id is not null'],
  pk_key_time: [PK, 'create index on X (api_key_id, received_at)'],
  before_0011: [
    PK,
    'create index on X (received_at)',
    'create index on X (client_request_id)',
    'create index on X (api_key_id, received_at)',
  ],
  after_0011: [
    PK,
    'create index on X (received_at)',
    'create index on X (client_request_id) where client_request_id is not null',
    'create index on X (api_key_id, received_at)',
  ],
};

const dir = mkdtempSync(join(tmpdir(), 'records-indexes-'));
const store = await openStore({ driver: 'pglite', dataDir: dir });
const pg = pgliteOf(store.db);
if (!pg) throw new Error('not PGlite');
for (const [name, ddl] of Object.entries(variants)) {
  await pg.exec(`create table ${name} as select * from request_records where false`);
  for (const d of ddl) await pg.exec(d.replace('X', name));
}
const row = (i: number) =>
  entryOf(sampleRecordRow({ clientRequestId: i % 10 === 0 ? `c-${Math.random()}` : null, apiKeyId: `k${i % 20}`, bodiesAt: 'seg:1:2:3' }));
const cpuUs = (): number => {
  const c = process.cpuUsage();
  return c.user + c.system;
};
const us: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS + 2; r++) {
  for (const name of Object.keys(variants)) {
    const blob = new Blob(Array.from({ length: BATCH }, (_, i) => entryCsv(row(i))));
    const t = cpuUs();
    await pg.exec(COPY_SQL.replace('copy request_records', `copy ${name}`), { blob });
    if (r >= 2) {
      const list = us[name] ?? [];
      us[name] = list;
      list.push((cpuUs() - t) / BATCH);
    }
  }
}
for (const [name, a] of Object.entries(us))
  console.log(`${name.padEnd(18)} ${([...a].sort((x, y) => x - y)[a.length >> 1] ?? 0).toFixed(1)} µs/row`);
await store.close();
rmSync(dir, { recursive: true, force: true });
