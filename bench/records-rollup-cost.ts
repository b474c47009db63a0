/**
 * Standalone: what keeping request_usage_daily (GetUsage's rollup) costs the record insert, two ways,
 * in interleaved rounds (median shown):
 *   none     the insert alone (the rollup triggers dropped)
 *   trigger  the statement-level triggers of migration 0014 (transition table, one upsert per batch)
 *   writer   the writer does it: PGlite — COPY, then one upsert of the batch summed in JS, in one
 *            transaction; PostgreSQL — the JSON insert as a CTE feeding the upsert (one statement)
 * On PostgreSQL also the writer thread's COPY (workerStore) without and with the trigger.
 * Measured on the shared 2-core machine (2026-11-27, load ~3–8, 10 rounds of 500 rows): PGlite
 * none 22.3, trigger 25.3, writer 32.8 µs/row CPU; PostgreSQL (wall, so the machine's load moves
 * it run to run) json 68.2, json+trigger 71.6, json+writer 68.1, copy 48.6, copy+trigger 55.3 µs/row.
 * The triggers were kept: cheaper on the embedded COPY path, as cheap as the CTE on PostgreSQL,
 * they work under COPY (which a CTE cannot wrap), and they follow every delete (retention purges)
 * and truncate without the callers knowing.
 * PGlite (a data directory, as embedded): CPU µs per row of this process. PostgreSQL
 * (postgres://gateway:gateway@127.0.0.1:5432, database records_rollup_cost): wall µs per row.
 *   bun bench/records-rollup-cost.ts [rounds=12] [rows-per-batch=500]
 * Rows: ~1.2 KB of bodies, 200 API keys × 8 models, UUIDv7 ids.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql as q } from 'drizzle-orm';
import postgres from 'postgres';
import type { RecordEntry } from '../src/core/records.ts';
import { batchJson, INSERT_SQL, workerStore } from '../src/records/backend.ts';
import { COPY_SQL, entryCsv, entryOf } from '../src/records/entry.ts';
import { openStore } from '../src/store/db.ts';
import { pgliteOf } from '../src/store/pglite.ts';
import { requestUsageDaily } from '../src/store/schema/index.ts';
import { sampleRecordRow } from './lib/record-sample.ts';

const ROUNDS = Number(process.argv[2] ?? 12);
const BATCH = Number(process.argv[3] ?? 500);
const PG_URL = 'postgres://gateway:gateway@127.0.0.1:5432';
const DROP = [
  'drop trigger request_usage_daily_add on X',
  'drop trigger request_usage_daily_remove on X',
  'drop trigger request_usage_daily_clear on X',
];

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'y'.repeat(600) }] });
const answer = JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'z'.repeat(500) } }] });
const batch = (): RecordEntry[] =>
  Array.from({ length: BATCH }, (_, i) =>
    entryOf({ ...sampleRecordRow({ apiKeyId: `k${(i * 7) % 200}`, model: `m${i % 8}` }), requestBody: body, responseBody: answer }),
  );

const SUMS = 'requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd';
const UPSERT_SET = SUMS.split(', ')
  .map((c) => `${c} = u.${c} + excluded.${c}`)
  .join(', ');
const KEYS = 'customer_id, project_id, day, api_key_id, model, provider';
/** The batch summed in JS (writer variant on PGlite). */
const summed = (entries: readonly RecordEntry[]): string => {
  const m = new Map<string, (string | number)[]>();
  for (const e of entries) {
    const r = e.row;
    const k = [
      r.customer_id ?? '',
      r.project_id ?? '',
      String(r.received_at).slice(0, 10),
      r.api_key_id ?? '',
      r.model ?? '',
      r.provider ?? '',
    ].map(String);
    const key = k.join('\u0000');
    const cur = m.get(key) ?? [...k, 0, 0, 0, 0, 0, 0];
    const add = [1, r.input_tokens, r.output_tokens, r.cached_input_tokens, r.cache_write_tokens, r.cost_nano_usd].map((v) =>
      Number(v ?? 0),
    );
    for (let i = 0; i < 6; i++) cur[6 + i] = Number(cur[6 + i]) + (add[i] as number);
    m.set(key, cur);
  }
  return JSON.stringify([...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v));
};
const UPSERT_JSON = `insert into request_usage_daily as u (${KEYS}, ${SUMS})
  select a->>0, a->>1, (a->>2)::date, a->>3, a->>4, a->>5, (a->>6)::bigint, (a->>7)::bigint, (a->>8)::bigint, (a->>9)::bigint, (a->>10)::bigint, (a->>11)::bigint
  from jsonb_array_elements($1::text::jsonb) a on conflict (${KEYS}) do update set ${UPSERT_SET}`;
const CTE_SQL = `with ins as (${INSERT_SQL} returning customer_id, project_id, received_at, api_key_id, model, provider, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd)
  insert into request_usage_daily as u (${KEYS}, ${SUMS})
  select coalesce(customer_id, ''), coalesce(project_id, ''), (received_at at time zone 'UTC')::date, coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, ''),
    count(*), sum(input_tokens), sum(output_tokens), sum(cached_input_tokens), sum(cache_write_tokens), sum(cost_nano_usd)
  from ins group by 1, 2, 3, 4, 5, 6 order by 1, 2, 3, 4, 5, 6 on conflict (${KEYS}) do update set ${UPSERT_SET}`;

const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1] ?? 0;
const cpu = (): number => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

// ---- PGlite -------------------------------------------------------------------------------------
const dirs: string[] = [];
const lite = await Promise.all(
  ['none', 'trigger', 'writer'].map(async (name) => {
    const dir = mkdtempSync(join(tmpdir(), 'rollup-cost-'));
    dirs.push(dir);
    const store = await openStore({ driver: 'pglite', dataDir: dir });
    const pg = pgliteOf(store.db);
    if (!pg) throw new Error('not PGlite');
    if (name !== 'trigger') for (const d of DROP) await pg.exec(d.replace('X', 'request_records'));
    return { name, store, pg, us: [] as number[] };
  }),
);
for (let r = 0; r < ROUNDS + 2; r++) {
  for (let k = 0; k < lite.length; k++) {
    const v = lite[(k + r) % lite.length] as (typeof lite)[number];
    const entries = batch();
    Bun.gc(true);
    const t = cpu();
    if (v.name === 'writer') {
      // One transaction (PGlite is one session): the COPY, then the upsert of the batch's sums.
      await v.pg.exec('begin');
      await v.pg.exec(COPY_SQL, { blob: new Blob(entries.map(entryCsv)) });
      await v.pg.exec(UPSERT_JSON.replace('$1', `'${summed(entries).replaceAll("'", "''")}'`));
      await v.pg.exec('commit');
    } else await v.pg.exec(COPY_SQL, { blob: new Blob(entries.map(entryCsv)) });
    if (r >= 2) v.us.push((cpu() - t) / BATCH);
  }
}
for (const v of lite) {
  const [sums] = await v.store.db.select({ n: q<string>`coalesce(sum(${requestUsageDaily.requests}), 0)` }).from(requestUsageDaily);
  const n = sums?.n;
  console.log(`pglite ${v.name.padEnd(8)} ${median(v.us).toFixed(1)} µs/row CPU (rollup requests ${n})`);
  await v.store.close();
}
for (const d of dirs) rmSync(d, { recursive: true, force: true });

// ---- PostgreSQL ---------------------------------------------------------------------------------
const admin = postgres(`${PG_URL}/postgres`, { max: 1, onnotice: () => undefined });
await admin.unsafe('drop database if exists records_rollup_cost');
await admin.unsafe('create database records_rollup_cost');
const url = `${PG_URL}/records_rollup_cost`;
await (await openStore({ driver: 'postgres', url })).close();
const sql = postgres(url, { max: 1, onnotice: () => undefined });
for (const d of DROP) await sql.unsafe(d.replace('X', 'request_records')).catch(() => undefined);
// The JSON insert (the former path), the writer thread's COPY (the current one, through the real
// workerStore: CSV built here, COPY in its thread), each without and with the insert trigger; and
// the writer variant (a CTE around the JSON insert; a COPY cannot be wrapped so).
const ws = workerStore(url);
const ADD =
  'create trigger request_usage_daily_add after insert on request_records referencing new table as request_usage_new for each statement execute function request_usage_daily_add()';
const pgVariants = [
  { name: 'json', run: (b: RecordEntry[]) => sql.unsafe(INSERT_SQL, [batchJson(b)]), triggered: false },
  { name: 'json+trigger', run: (b: RecordEntry[]) => sql.unsafe(INSERT_SQL, [batchJson(b)]), triggered: true },
  { name: 'json+writer', run: (b: RecordEntry[]) => sql.unsafe(CTE_SQL, [batchJson(b)]), triggered: false },
  { name: 'copy', run: (b: RecordEntry[]) => ws.insert(b), triggered: false },
  { name: 'copy+trigger', run: (b: RecordEntry[]) => ws.insert(b), triggered: true },
];
const pgUs: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS + 2; r++) {
  for (let k = 0; k < pgVariants.length; k++) {
    const v = pgVariants[(k + r) % pgVariants.length] as (typeof pgVariants)[number];
    if (v.triggered) await sql.unsafe(ADD);
    const b = batch();
    const t = performance.now();
    const e = await v.run(b);
    if (e instanceof Error) throw e;
    if (r >= 2) {
      const list = pgUs[v.name] ?? [];
      pgUs[v.name] = list;
      list.push(((performance.now() - t) * 1000) / BATCH);
    }
    if (v.triggered) await sql.unsafe('drop trigger request_usage_daily_add on request_records');
  }
}
await ws.close?.();
for (const [name, a] of Object.entries(pgUs)) console.log(`postgres ${name.padEnd(8)} ${median(a).toFixed(1)} µs/row wall`);
await sql.end();
await admin.unsafe('drop database records_rollup_cost');
await admin.end();
