import { expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config/env.ts';
import { ConfigError } from '../src/config/setting-kinds.ts';
import { openStore } from '../src/store/db.ts';
import { testDatabase } from './support/db.ts';
import { admin, startTestGateway } from './support/gateway.ts';

/**
 * DATABASE_READ_URL: record searches and usage read from the replica, configuration reads and
 * writes stay on the primary. The "replica" here is a second database holding a record the
 * primary does not have: what the search and the usage answer says which database they read.
 */

test('DATABASE_READ_URL without DATABASE_URL is refused naming it', () => {
  expect(() => loadConfig([], { DATABASE_READ_URL: 'postgres://u:p@127.0.0.1:5432/replica' })).toThrow(ConfigError);
  expect(() => loadConfig([], { DATABASE_READ_URL: 'postgres://u:p@127.0.0.1:5432/replica' })).toThrow(/DATABASE_READ_URL/);
});

test.skipIf(!process.env.TEST_DATABASE_URL)(
  'searches and usage read the replica; configuration reads and writes stay on the primary',
  async () => {
    const replica = await testDatabase();
    const marker = Bun.randomUUIDv7();
    const rs = await openStore({ driver: 'postgres', url: replica.url as string });
    await rs.db.execute(sql`
      insert into request_records (request_id, received_at, customer_id, project_id, api_key_id, endpoint, model, provider, http_status, latency_ms, input_tokens)
      values (${marker}::uuid, now(), 'acme', 'default', 'k-replica', '/v1/chat/completions', 'm-replica', 'openai', 200, 5, 42)`);
    await rs.close();
    const tg = await startTestGateway({ DATABASE_READ_URL: replica.url as string });
    try {
      // A write and a configuration read: the primary (the replica has no such customer).
      await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
      const got = (await tg.must(admin('GetCustomer'), { customerId: 'acme' })) as { customer?: { name?: string } };
      expect(got.customer?.name).toBe('Acme');
      // The record exists only in the replica: the search and the usage found it there.
      const found = (await tg.must(admin('SearchRequestRecords'), { customerId: 'acme', requestId: marker })) as {
        records: { requestId: string }[];
      };
      expect(found.records.map((r) => r.requestId)).toEqual([marker]);
      const usage = (await tg.must(admin('GetUsage'), { customerId: 'acme', groupBy: 'model' })) as {
        groups: { key: string; requests: number; inputTokens: number }[];
      };
      expect(usage.groups).toEqual([expect.objectContaining({ key: 'm-replica', requests: 1, inputTokens: 42 })]);
      // The primary holds no record at all.
      const res: unknown = await tg.gw.store.db.execute(sql`select count(*)::int as n from request_records`);
      expect(res).toEqual([{ n: 0 }]);
    } finally {
      await tg.stop();
      await replica.drop();
    }
  },
  60_000,
);
