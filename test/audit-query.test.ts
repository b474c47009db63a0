import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { auditLogs, type NewAuditLogRow } from '../src/store/schema/audit.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import type { Body } from './management/support.ts';

/** QueryAuditLogs and GetAuditLog: every seed filter, both orders, paging, totalCount, the page size cap. */

let tg: TestGateway;
const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const RT = 'query_test';

const row = (i: number, over: Partial<NewAuditLogRow> = {}): NewAuditLogRow => ({
  // Three entries per millisecond: ties on timestamp are broken by id.
  timestamp: new Date(T0 + Math.floor(i / 3)),
  userId: i % 2 === 0 ? 'even' : 'odd',
  actorType: i % 5 === 0 ? 'system' : 'user',
  actionType: ['CREATE', 'UPDATE', 'DELETE'][i % 3] as string,
  resourceType: RT,
  resourceId: `r${i % 7}`,
  statusCode: i % 4 === 0 ? 400 : 200,
  success: i % 4 !== 0,
  correlationId: `corr-${i}`,
  ...over,
});

const q = async (body: Body): Promise<{ logs: Body[]; nextPageToken: string; totalCount: string }> => {
  const r = await tg.call(admin('QueryAuditLogs'), { resourceType: RT, ...body });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body as unknown as { logs: Body[]; nextPageToken: string; totalCount: string };
};

const walk = async (body: Body, during?: (page: number) => Promise<void>): Promise<Body[]> => {
  const out: Body[] = [];
  let token = '';
  for (let page = 0; page < 1000; page++) {
    const r = await q({ ...body, ...(token ? { pageToken: token } : {}) });
    out.push(...r.logs);
    await during?.(page);
    token = r.nextPageToken;
    if (!token) break;
  }
  return out;
};

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.gw.store.db.insert(auditLogs).values(Array.from({ length: 1200 }, (_, i) => row(i)));
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

describe('QueryAuditLogs', () => {
  test('default: newest first, 50 per page, totalCount across pages; pageSize above 1000 is served as 1000', async () => {
    const first = await q({});
    expect(first.logs.length).toBe(50);
    expect(first.totalCount).toBe('1200');
    // The newest millisecond holds entries 1197..1199 (their order within it is by id).
    expect(['corr-1197', 'corr-1198', 'corr-1199']).toContain(String(first.logs[0]?.correlationId));
    expect(first.logs[0]?.timestamp).toBe(new Date(T0 + 399).toISOString());
    expect((await q({ pageSize: 5000 })).logs.length).toBe(1000);
    expect((await q({ pageSize: 1000 })).logs.length).toBe(1000);
  });

  test('every filter, alone and together; times: start inclusive, end exclusive', async () => {
    expect((await q({ userId: 'even' })).totalCount).toBe('600');
    expect((await q({ actorType: 'system' })).totalCount).toBe('240');
    expect((await q({ actionType: 'DELETE' })).totalCount).toBe('400');
    expect((await q({ resourceId: 'r3' })).totalCount).toBe(
      String(Array.from({ length: 1200 }, (_, i) => i).filter((i) => i % 7 === 3).length),
    );
    expect((await q({ success: false })).totalCount).toBe('300');
    expect((await q({ success: true })).totalCount).toBe('900');
    expect((await q({ correlationId: 'corr-42' })).logs.map((l) => l.correlationId)).toEqual(['corr-42']);
    expect((await q({ resourceType: 'nothing' })).totalCount).toBe('0');
    // [T0+10ms, T0+20ms): entries 30..59.
    const range = await q({
      startTime: new Date(T0 + 10).toISOString(),
      endTime: new Date(T0 + 20).toISOString(),
      orderDirection: 'asc',
      pageSize: 100,
    });
    expect(range.logs.map((l) => String(l.correlationId)).sort()).toEqual(Array.from({ length: 30 }, (_, k) => `corr-${30 + k}`).sort());
    expect(range.totalCount).toBe('30');
    const both = await q({ userId: 'even', success: false, actionType: 'CREATE' });
    expect(both.totalCount).toBe(
      String(Array.from({ length: 1200 }, (_, i) => i).filter((i) => i % 2 === 0 && i % 4 === 0 && i % 3 === 0).length),
    );
  });

  test('both directions walk every entry once, in (timestamp, id) order', async () => {
    for (const orderDirection of ['asc', 'desc'] as const) {
      const all = await walk({ orderDirection, pageSize: 7 });
      expect(all.length).toBe(1200);
      expect(new Set(all.map((l) => l.id)).size).toBe(1200);
      const keys = all.map((l) => `${String(l.timestamp)}|${String(l.id)}`);
      const sorted = [...keys].sort();
      expect(keys).toEqual(orderDirection === 'asc' ? sorted : sorted.reverse());
    }
  });

  test('stable while entries are appended: no duplicate, no gap', async () => {
    let n = 0;
    const append = async () => {
      await tg.gw.store.db
        .insert(auditLogs)
        .values(Array.from({ length: 5 }, () => row(5000 + n++, { timestamp: new Date(T0 + 10_000_000 + n), resourceType: RT })));
    };
    const desc = await walk({ pageSize: 50 }, append);
    expect(new Set(desc.map((l) => l.id)).size).toBe(desc.length);
    expect(desc.length).toBe(1200); // newer entries land before the cursor of a newest-first walk
    const asc = await walk({ orderDirection: 'asc', pageSize: 97 }, append);
    expect(new Set(asc.map((l) => l.id)).size).toBe(asc.length);
    expect(asc.length).toBeGreaterThanOrEqual(1200 + 5 * 25); // every pre-existing entry plus what was appended before the end
  });

  test('page tokens: bound to their direction; garbage is invalid_argument', async () => {
    const page = await q({ pageSize: 2 });
    const r = await tg.call(admin('QueryAuditLogs'), { resourceType: RT, orderDirection: 'asc', pageToken: page.nextPageToken });
    expect(r.status).toBe(400);
    expect(String(r.body.message)).toContain('pageToken');
    expect((await tg.call(admin('QueryAuditLogs'), { pageToken: 'bogus' })).status).toBe(400);
  });

  test('GetAuditLog returns the entry exactly as the query does; unknown id is not_found', async () => {
    const [e] = (await q({ pageSize: 1 })).logs;
    const r = await tg.call(admin('GetAuditLog'), { id: e?.id });
    expect(r.body.log).toEqual(e);
    expect((await tg.call(admin('GetAuditLog'), { id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });
});
