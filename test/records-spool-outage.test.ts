import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startThrowawayPostgres, type ThrowawayPostgres, throwawayUnavailable } from './support/throwaway-pg.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 22, defect 6: the all-in-one gateway on PostgreSQL lost every record past its in-memory
 * queue bound while the database was down (55,222 of 200,000 in a 15 s outage at ~6k req/s). Here
 * the bound is 1,000 rows (GATEWAY_RECORD_QUEUE_MAX) and the outage outlasts it several times over
 * at the rate this machine manages: records go to GATEWAY_DATA_DIR/record-spool, `/readyz` says how
 * many (and how many bytes) wait there, and after recovery every request is in the store exactly
 * once. The database is a throw-away server of the test's own, stopped as abruptly as a crash.
 */

const QUEUE_MAX = 1_000;
const OUTAGE_MS = 8_000;

interface ReadyRecords {
  queued: number;
  spooled: number;
  spooledBytes: number;
  dropped: number;
  storeDown: boolean;
}

const skip = throwawayUnavailable();
if (skip) console.warn(`records-spool-outage skipped: ${skip}`);

describe.skipIf(skip !== undefined)('the embedded data plane on PostgreSQL, database down under load', () => {
  let pg: ThrowawayPostgres | undefined;
  let w: World | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-spool-outage-'));
  afterAll(async () => {
    pg?.start();
    await stopWorld(w).catch(() => undefined);
    pg?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  test('records past the queue bound are spooled to disk, reported by /readyz, and all stored exactly once after recovery', async () => {
    pg = await startThrowawayPostgres();
    w = await startWorld({
      DATABASE_URL: pg.url,
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_RECORD_QUEUE_MAX: String(QUEUE_MAX),
      WORKER_POLL_INTERVAL: '500ms',
    });
    const world = w;
    const ids: string[] = [];
    const failures: number[] = [];
    let running = true;
    const worker = async (n: number) => {
      for (let i = 0; running; i++) {
        const res = await fetch(`${world.tg.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${world.p.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: `spool ${n}/${i}` }] }),
        });
        await res.text();
        if (res.status === 200) ids.push(res.headers.get('x-request-id') ?? '');
        else failures.push(res.status);
      }
    };
    const load = Promise.all(Array.from({ length: 16 }, (_, n) => worker(n)));
    const readyz = async (): Promise<ReadyRecords> =>
      ((await (await fetch(`${world.tg.url}/readyz`)).json()) as { records: ReadyRecords }).records;

    await Bun.sleep(1_000);
    const before = ids.length;
    pg.stop();
    const stoppedAt = Date.now();
    const seen: ReadyRecords[] = [];
    while (Date.now() - stoppedAt < OUTAGE_MS) {
      await Bun.sleep(500);
      seen.push(await readyz());
    }
    const servedWhileDown = ids.length - before;
    pg.start();
    await Bun.sleep(1_500);
    running = false;
    await load;

    expect(failures).toEqual([]);
    // The outage outlasted the in-memory bound: the old writer dropped everything past it.
    expect(servedWhileDown).toBeGreaterThan(2 * QUEUE_MAX);
    // While down, /readyz said what waits on disk; memory never held more than the bound.
    const peak = seen.reduce((a, b) => (b.spooled > a.spooled ? b : a));
    expect(peak.storeDown).toBe(true);
    expect(peak.spooled).toBeGreaterThan(QUEUE_MAX);
    expect(peak.spooledBytes).toBeGreaterThan(peak.spooled * 100);
    expect(Math.max(...seen.map((s) => s.queued))).toBeLessThanOrEqual(QUEUE_MAX);
    expect(seen.every((s) => s.dropped === 0)).toBe(true);

    // The spool drains by itself once the database is back (how much was spooled follows the
    // machine's speed: 150k rows on a fast run, drained at a few thousand rows a second under the suite).
    const until = Date.now() + 45_000;
    while ((world.tg.gw.records.stats.queued > 0 || world.tg.gw.records.stats.spooled > 0) && Date.now() < until) await Bun.sleep(100);
    expect(world.tg.gw.records.stats).toMatchObject({ queued: 0, spooled: 0, spooledBytes: 0, dropped: 0, storeDown: false });

    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<
        { id: string; n: number }[]
      >`select request_id::text as id, count(*)::int as n from request_records where api_key_id = ${world.p.keyId} group by request_id`;
      const stored = new Map(rows.map((r) => [r.id, r.n]));
      expect(ids.filter((id) => stored.get(id) !== 1)).toEqual([]);
      // Nothing but these requests, each once.
      expect(rows.length).toBe(ids.length);
    } finally {
      await sql.end();
    }
  }, 120_000);
});
