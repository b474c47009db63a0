/**
 * Request records at scale (issues 25 and 49), on PostgreSQL, records partitioned by UTC day
 * (migration 0019). In a fresh database (`records_scale`) whose 61 days have their partitions:
 *   1. ingest through the gateway's own write path — the writer thread's COPY FROM STDIN
 *      (records/pg-worker.ts), batches of 500 — with 1, 2, 4 … writers at once (`--writers`), each
 *      its own thread and connection with one batch in flight (as management-plane replicas are),
 *      `--ingest` rows per writer count: rows/s and the speed-up over one writer; then one process's
 *      RecordWriter with 1, 2, 4 … batches in flight (`--in-flight`, GATEWAY_RECORD_WRITERS), each on
 *      a connection of its writer thread;
 *   2. a bulk fill to `--rows` built by the server (one INSERT … SELECT per day, the rollup triggers
 *      firing): how long generation took;
 *   3. SearchRequestRecords by request id and by client request id, p50/p99 of 1,000;
 *   4. GetUsage (records/usage.ts): a calendar month by key, by model, for one project; 30 days with
 *      partial ends; and 200 random ranges (any start and end to the second), p50/p99;
 *   5. the retention purge at 30 days on 2026-10-11 09:30: whole partitions dropped (per second,
 *      rows per second) and the partial day left to the bounded delete;
 *   6. sizes per million rows and both rollups against a scan of the records.
 *
 *   bun bench/records-scale.ts [--rows 10000000] [--ingest 300000] [--writers 1,2,4] [--in-flight 1,2,4] [--bodies small|none]
 *     [--base postgres://gateway:gateway@127.0.0.1:5432] [--keep]
 *
 * The database's backends are reniced to 19 (the bench runs on a shared machine). Goals: search ≤ 10
 * ms, GetUsage ≤ 200 ms p99 for any range, ingest ≥ 30,000 rows/s (three data planes at 10,000).
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { workerStore } from '../src/records/backend.ts';
import { dropExpiredPartitions, listPartitions, retentionKey } from '../src/records/partitions.ts';
import { RecordRetention } from '../src/records/retention.ts';
import { searchRecords } from '../src/records/search.ts';
import { type UsageGroupBy, usageSums } from '../src/records/usage.ts';
import { openStore } from '../src/store/db.ts';
import { customers, projectSettings, projects } from '../src/store/schema/index.ts';
import { bodiesOf, CUSTOMERS, DAY_MS, DAYS, entryAt, fillDaySql, START } from './lib/records-data.ts';
import { writerIngest } from './lib/writer-ingest.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    ingest: { type: 'string', default: '300000' },
    writers: { type: 'string', default: '1,2,4' },
    'in-flight': { type: 'string', default: '1,2,4' },
    bodies: { type: 'string', default: 'small' },
    base: { type: 'string', default: 'postgres://gateway:gateway@127.0.0.1:5432' },
    keep: { type: 'boolean', default: false },
  },
});
const ROWS = Number(args.rows);
const INGEST = Number(args.ingest);
const WRITERS = args.writers.split(',').map(Number);
const IN_FLIGHT = args['in-flight'].split(',').filter(Boolean).map(Number);
const BATCH = 500;
const DB = 'records_scale';
const bodies = bodiesOf(args.bodies);

const admin = postgres(`${args.base}/postgres`, { max: 1, onnotice: () => undefined });
await admin.unsafe(`drop database if exists ${DB} with (force)`);
await admin.unsafe(`create database ${DB}`);
const url = `${args.base}/${DB}`;
const store = await openStore({ driver: 'postgres', url });
const raw = postgres(url, { max: 1, onnotice: () => undefined });

/** Every backend of the bench's database at nice 19 (they are this run's own connections). */
const renice = async (): Promise<void> => {
  const pids = await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${DB}`;
  if (pids.length > 0) Bun.spawnSync(['renice', '-n', '19', '-p', ...pids.map((p) => String(p.pid))]);
};

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const r1 = (x: number): number => Math.round(x * 10) / 10;
const say = (m: string): boolean => process.stderr.write(`  ${m}\n`);

const out: Record<string, unknown> = { rows: ROWS, bodies: args.bodies };
try {
  for (let d = 0; d <= DAYS; d++)
    await raw.unsafe(`select request_records_add_partition('${new Date(START + d * DAY_MS).toISOString().slice(0, 10)}'::date)`);
  await renice();

  // ---- 1. ingest with N writers -----------------------------------------------------------------
  const ingest: Record<string, number> = {};
  let written = 0;
  for (const n of WRITERS) {
    const writers = Array.from({ length: n }, () => workerStore(url));
    const inflight: (Promise<unknown> | undefined)[] = Array.from({ length: n }, () => undefined);
    const t0 = performance.now();
    for (let i = 0, w = 0; i < INGEST; i += BATCH, w = (w + 1) % n) {
      const batch = Array.from({ length: Math.min(BATCH, INGEST - i) }, (_, j) => entryAt(i + j, INGEST, bodies));
      const e = await inflight[w];
      if (e) throw e;
      inflight[w] = (writers[w] as (typeof writers)[number]).insert(batch);
      if (i === BATCH * n) await renice();
    }
    for (const p of inflight) {
      const e = await p;
      if (e) throw e;
    }
    const rate = Math.round(INGEST / ((performance.now() - t0) / 1000));
    ingest[`writers_${n}`] = rate;
    say(`${n} writer(s): ${rate} rows/s`);
    await Promise.all(writers.map((w) => w.close?.()));
    written += INGEST;
  }
  out.ingest_rows_per_s = ingest;
  out.ingest_speedup_over_one = Object.fromEntries(
    Object.entries(ingest).map(([k, v]) => [k, r1(v / (ingest[`writers_${WRITERS[0]}`] ?? v))]),
  );
  const inFlight: Record<string, number> = {};
  for (const n of IN_FLIGHT) {
    const entry = (i: number) => {
      // The writer thread's connections are open by then.
      if (i === 4 * BATCH * n) void renice();
      return entryAt(i, INGEST, bodies);
    };
    const rate = await writerIngest(workerStore(url, n), { writers: n, rows: INGEST, entry });
    inFlight[`in_flight_${n}`] = rate;
    say(`one RecordWriter, ${n} batch(es) in flight: ${rate} rows/s`);
    written += INGEST;
  }
  out.record_writer_rows_per_s = inFlight;

  // ---- 2. bulk fill -----------------------------------------------------------------------------
  const fill = Math.max(0, ROWS - written);
  const tf = performance.now();
  // The machine is shared: after 9 minutes of filling, a minute's pause (not counted in fill_seconds).
  let stretch = tf;
  let paused = 0;
  for (let d = 0; d < DAYS; d++) {
    if (performance.now() - stretch > 540_000) {
      say('pausing the fill for 60 s');
      await Bun.sleep(60_000);
      paused += 60_000;
      stretch = performance.now();
    }
    const n = Math.floor(fill / DAYS) + (d === DAYS - 1 ? fill % DAYS : 0);
    if (n > 0) await raw.unsafe(fillDaySql(d, n, bodies));
    if (d % 10 === 9) say(`filled ${d + 1} of ${DAYS} days`);
  }
  const fillS = (performance.now() - tf - paused) / 1000;
  out.fill_seconds = Math.round(fillS);
  out.fill_rows_per_s = Math.round(fill / fillS);
  const tv = performance.now();
  await raw.unsafe('vacuum analyze request_records');
  await raw.unsafe('vacuum analyze request_usage_daily');
  await raw.unsafe('vacuum analyze request_usage_hourly');
  out.vacuum_analyze_seconds = Math.round((performance.now() - tv) / 1000);

  // ---- sizes ------------------------------------------------------------------------------------
  const [size] = await raw<{ table: string; indexes: string; daily: string; hourly: string; n: string }[]>`
    select sum(pg_table_size(relid)) as table, sum(pg_indexes_size(relid)) as indexes, (select count(*) from request_records) as n,
      pg_total_relation_size('request_usage_daily') as daily, pg_total_relation_size('request_usage_hourly') as hourly
    from pg_partition_tree('request_records')`;
  const total = Number(size?.n);
  const mb = (b: string | undefined): number => r1(Number(b) / 1_048_576 / (total / 1_000_000));
  out.total_rows = total;
  out.partitions = (await listPartitions(store.db)).length;
  out.mb_per_million_rows = {
    table: mb(size?.table),
    indexes: mb(size?.indexes),
    rollup_daily: mb(size?.daily),
    rollup_hourly: mb(size?.hourly),
  };

  // ---- 3. search --------------------------------------------------------------------------------
  const time = async (n: number, f: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> => {
    for (let i = 0; i < 20; i++) await f(i);
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      await f(i);
      ms.push(performance.now() - s);
    }
    return { p50: r1(pct(ms, 50)), p99: r1(pct(ms, 99)) };
  };
  const ids = (await raw<{ id: string }[]>`select request_id as id from request_records tablesample system (0.2) limit 1000`).map(
    (r) => r.id,
  );
  const clientIds = (
    await raw<
      { id: string }[]
    >`select client_request_id as id from request_records tablesample system (1) where client_request_id is not null limit 1000`
  ).map((r) => r.id);
  const pickOf = (a: string[], i: number): string => a[(i * 7919) % a.length] as string;
  out.search_by_request_id_ms = await time(1000, async (i) => {
    const got = await searchRecords(store.db, { requestId: pickOf(ids, i), limit: 51 });
    if (got.length !== 1) throw new Error('a sampled request id was not found');
  });
  out.search_by_client_request_id_ms = await time(1000, async (i) => {
    const got = await searchRecords(store.db, { clientRequestId: pickOf(clientIds, i), limit: 51 });
    if (got.length !== 1) throw new Error('a sampled client request id was not found');
  });

  // ---- 4. GetUsage ------------------------------------------------------------------------------
  const october = { start: new Date('2026-10-01T00:00:00Z'), end: new Date('2026-11-01T00:00:00Z') };
  const lastThirty = { start: new Date('2026-10-01T09:30:00Z'), end: new Date('2026-10-31T09:30:00Z') };
  const usage = (groupBy: UsageGroupBy, range: { start: Date; end: Date }) => (i: number) =>
    usageSums(store.db, { customerId: `cust-${i % CUSTOMERS}`, groupBy, ...range });
  out.usage_month_by_key_ms = await time(200, usage('api_key', october));
  out.usage_month_by_model_ms = await time(200, usage('model', october));
  out.usage_month_by_key_for_one_project_ms = await time(200, (i) =>
    usageSums(store.db, { customerId: `cust-${i % CUSTOMERS}`, projectId: `proj-${i % 3}`, groupBy: 'api_key', ...october }),
  );
  out.usage_30_days_partial_ends_by_model_ms = await time(50, usage('model', lastThirty));
  // Any range: a start anywhere in the 61 days (to the second), up to 45 days long, by key or model.
  const span = DAYS * DAY_MS;
  out.usage_any_range_ms = await time(200, (i) => {
    const s = START + Math.floor(Math.random() * span);
    const e = Math.min(START + span, s + 1000 + Math.floor(Math.random() * 45 * DAY_MS));
    return usageSums(store.db, {
      customerId: `cust-${i % CUSTOMERS}`,
      groupBy: i % 2 === 0 ? 'api_key' : 'model',
      start: new Date(s),
      end: new Date(e),
    });
  });

  // ---- 5. purge ---------------------------------------------------------------------------------
  const days = new Map<string, number>();
  for (let c = 0; c < CUSTOMERS; c++) {
    const [cust] = await store.db
      .insert(customers)
      .values({ customerId: `cust-${c}` })
      .returning();
    for (let p = 0; p < 3; p++) {
      const [proj] = await store.db
        .insert(projects)
        .values({ customerUuid: cust?.id as string, customerId: `cust-${c}`, projectId: `proj-${p}` })
        .returning();
      await store.db.insert(projectSettings).values({
        projectUuid: proj?.id as string,
        customerId: `cust-${c}`,
        projectId: `proj-${p}`,
        settingName: 'record-retention',
        settingValue: '{"bodies":"full","days":30}',
      });
      days.set(retentionKey(`cust-${c}`, `proj-${p}`), 30);
    }
  }
  // "Now" 2026-10-11 09:30: 2026-09-01 … 09-10 are past 30 days whole; 09-11 until 09:30 in part.
  const now = Date.UTC(2026, 9, 11, 9, 30);
  const td = performance.now();
  const dropped = await dropExpiredPartitions(store.db, now, days);
  const dropS = (performance.now() - td) / 1000;
  out.purge_partitions_dropped = dropped.partitions;
  out.purge_partitions_per_s = r1(dropped.partitions / dropS);
  out.purge_rows_in_dropped_partitions = dropped.rows;
  out.purge_rows_per_s_by_drop = Math.round(dropped.rows / dropS);
  const tp = performance.now();
  const rest = await new RecordRetention(store.db, { responseRetentionMs: 30 * DAY_MS }).sweep(now);
  const restS = (performance.now() - tp) / 1000;
  out.purge_bounded_delete_rows = rest.deleted;
  out.purge_bounded_delete_rows_per_s = Math.round(rest.deleted / restS);

  // ---- 6. the rollups against a scan ------------------------------------------------------------
  const differ = async (table: string, bucket: string): Promise<number> => {
    const [check] = await raw.unsafe<{ differ: string }[]>(`
      with kept as (select customer_id, project_id, ${bucket === 'day' ? 'day' : 'hour'} as b, api_key_id, model, provider, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd from ${table}),
      scanned as (
        select coalesce(customer_id, '') as customer_id, coalesce(project_id, '') as project_id,
          ${bucket === 'day' ? "(received_at at time zone 'UTC')::date" : "date_trunc('hour', received_at)"} as b, coalesce(api_key_id, '') as api_key_id,
          coalesce(model, '') as model, coalesce(provider, '') as provider, count(*) as requests, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
          sum(cached_input_tokens) as cached_input_tokens, sum(cache_write_tokens) as cache_write_tokens, sum(cost_nano_usd) as cost_nano_usd
        from request_records group by 1, 2, 3, 4, 5, 6)
      select count(*) as differ from ((select * from kept except all select * from scanned) union all (select * from scanned except all select * from kept)) d`);
    return Number(check?.differ);
  };
  out.rollup_rows_differing_from_scan = {
    daily: await differ('request_usage_daily', 'day'),
    hourly: await differ('request_usage_hourly', 'hour'),
  };
  const p99 = (k: string): number => (out[k] as { p99: number }).p99;
  out.goals = {
    search_le_10ms: Math.max(p99('search_by_request_id_ms'), p99('search_by_client_request_id_ms')) <= 10,
    usage_le_200ms:
      Math.max(
        p99('usage_month_by_key_ms'),
        p99('usage_month_by_model_ms'),
        p99('usage_30_days_partial_ends_by_model_ms'),
        p99('usage_any_range_ms'),
      ) <= 200,
    ingest_ge_30000: Math.max(...Object.values(ingest), ...Object.values(inFlight)) >= 30_000,
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await raw.end();
  await store.close();
  if (!args.keep) await admin.unsafe(`drop database if exists ${DB} with (force)`);
  await admin.end();
}
