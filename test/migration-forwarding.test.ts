import { afterAll, expect, test } from 'bun:test';
import { testDatabase } from './support/db.ts';
import { openMigrationHandle as open, removeMigrationFolders, ROOT, upTo } from './support/migrations.ts';

/**
 * Migration 0016 on a store that holds records and telemetry configs written before it: every
 * record gets a stored_at, and the traces/metrics/logs configs — stored only until then — start
 * forwarding with the records stored from the upgrade on (their cursor is past every existing
 * row), while an audit_logs config keeps its cursor.
 */

afterAll(removeMigrationFolders);

test('0016: existing records get stored_at; existing traces/metrics/logs configs start after them, audit_logs keeps its cursor', async () => {
  const tdb = await testDatabase();
  const h = await open(tdb.url);
  try {
    await h.migrate(upTo('0015_records_usage_rollup'));
    await h.query(
      `insert into request_records (request_id, received_at, endpoint, http_status, latency_ms) values ('ffffffff-0000-7000-8000-000000000001', now() - interval '1 day', '/v1/chat/completions', 200, 5)`,
    );
    for (const type of ['traces', 'logs', 'audit_logs'])
      await h.query(
        `insert into telemetry_configs (user_id, telemetry_type, sink_url, protocol, auth_type, cursor_ts) values ('ops', '${type}', 'http://sink', 'http/json', 'none', now() - interval '2 days')`,
      );
    await h.migrate(ROOT);
    expect(await h.query(`select stored_at is not null and stored_at > received_at as stored from request_records`)).toEqual([
      { stored: true },
    ]);
    const configs = await h.query(
      `select telemetry_type, (cursor_ts, cursor_id) >= (r.stored_at, r.request_id) as past from telemetry_configs, request_records r order by telemetry_type`,
    );
    expect(configs).toEqual([
      { telemetry_type: 'audit_logs', past: false },
      { telemetry_type: 'logs', past: true },
      { telemetry_type: 'traces', past: true },
    ]);
    // A record stored now comes after the cursor.
    await Bun.sleep(5);
    await h.query(
      `insert into request_records (request_id, received_at, endpoint, http_status, latency_ms) values ('00000000-0000-7000-8000-000000000002', now() - interval '3 days', '/v1/x', 200, 5)`,
    );
    const after = await h.query(
      `select count(*)::int as n from telemetry_configs c, request_records r where c.telemetry_type = 'logs' and (r.stored_at, r.request_id) > (c.cursor_ts, c.cursor_id)`,
    );
    expect(after).toEqual([{ n: 1 }]);
  } finally {
    await h.close();
    await tdb.drop();
  }
});
