/**
 * QueryAuditLogs at a million entries (issue 10): bulk-inserts N entries with generate_series into a
 * fresh PostgreSQL database, then times the query the API runs (a filtered page + totalCount) for
 * typical filters, cold and warm. Not part of the test run (it takes about a minute).
 *
 *   AUDIT_BENCH_DATABASE_URL=postgres://gateway:gateway@127.0.0.1:5432/postgres bun bench/audit-query-1m.ts [N]
 */
import postgres from 'postgres';
import { type AuditFilter, queryAuditLogs } from '../src/audit/query.ts';
import { openStore } from '../src/store/db.ts';

const base = process.env.AUDIT_BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base) throw new Error('set AUDIT_BENCH_DATABASE_URL (a PostgreSQL URL; a fresh database is created next to it)');
const n = Number(process.argv[2] ?? 1_000_000);
const name = `audit_bench_${process.pid}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;
const store = await openStore({ driver: 'postgres', url: url.toString() });
const raw = postgres(url.toString(), { max: 1, onnotice: () => {} });

const ms = (t0: number) => Math.round((performance.now() - t0) * 10) / 10;
try {
  let t0 = performance.now();
  // A year of entries, ~100 users, 4 actions, 7 resource types, 1 in 20 refused.
  await raw.unsafe(`
    insert into audit_logs (timestamp, user_id, actor_type, action_type, resource_type, resource_id, endpoint, http_method, status_code, success, correlation_id, request_body)
    select timestamp '2025-01-01' + (g * interval '31 seconds'),
           'user-' || (g % 100), case when g % 50 = 0 then 'system' else 'user' end,
           (array['CREATE','UPDATE','DELETE','REVOKE'])[1 + g % 4],
           (array['customer','project','route','api_key','dataplane','provider_connection','project_member'])[1 + g % 7],
           'res-' || (g % 5000), '/admin.v1.AdminService/Op', 'POST',
           case when g % 20 = 0 then 400 else 200 end, g % 20 <> 0, gen_random_uuid()::text,
           jsonb_build_object('customerId', 'c' || (g % 300), 'name', 'entry ' || g)
    from generate_series(1, ${n}) g`);
  console.log(`inserted ${n} entries in ${ms(t0)} ms`);
  t0 = performance.now();
  await raw.unsafe('analyze audit_logs');
  console.log(`analyze: ${ms(t0)} ms`);

  const cases: [string, AuditFilter][] = [
    ['no filter', {}],
    ['userId', { userId: 'user-42' }],
    ['actionType + last 30 days', { actionType: 'DELETE', startTime: new Date('2025-12-01'), endTime: new Date('2026-01-01') }],
    ['resourceId', { resourceId: 'res-1234' }],
    ['success=false', { success: false }],
    ['correlationId', { correlationId: 'nope' }],
    ['resourceType + userId', { resourceType: 'route', userId: 'user-7' }],
  ];
  for (const [label, f] of cases) {
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const page = await queryAuditLogs(store.db, f, 'desc', 50, undefined);
      times.push(ms(t));
      total = page.totalCount;
    }
    console.log(`${label.padEnd(28)} totalCount=${String(total).padStart(8)}  page+count ms: ${times.join(' / ')}`);
  }
} finally {
  await raw.end();
  await store.close();
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
}
