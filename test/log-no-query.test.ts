import { afterAll, describe, expect, test } from 'bun:test';
import { DrizzleQueryError, eq, sql } from 'drizzle-orm';
import { describeError, setLogLevel, setLogSink } from '../src/core/log.ts';
import { openStore } from '../src/store/db.ts';
import { customers } from '../src/store/schema/index.ts';
import { testDatabase } from './support/db.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { startThrowawayPostgres, type ThrowawayPostgres, throwawayUnavailable } from './support/throwaway-pg.ts';

/**
 * Issue 22, defect 7: a log line never carries a query. drizzle wraps a driver error in one whose
 * message is the statement ("Failed query: select …"), and postgres.js / PGlite errors carry the
 * statement in `query`; `describeError` keeps the class, the code and the driver's own first line,
 * and no statement text — checked on errors of the real drivers and on the management API's log
 * line while its database is down.
 */

/** Text of the statements below (and their parameters): none of it may appear in a description. */
const SQL_TEXT = /select|insert|from "|where|"customers"|needle-|secret_col|\$1|params:/i;

const failure = async (run: () => Promise<unknown>): Promise<unknown> => {
  try {
    await run();
  } catch (e) {
    return e;
  }
  throw new Error('expected the query to fail');
};

describe('describeError on query failures', () => {
  test('a statement the server refuses (real driver): class, code and server message; no statement text', async () => {
    const target = await testDatabase();
    const store = await openStore(target.url ? { driver: 'postgres', url: target.url } : { driver: 'pglite', dataDir: 'memory' });
    try {
      const e = await failure(() =>
        store.db.execute(sql`select secret_col from no_such_table_8271 where secret_col = ${'needle-param'} or 'needle-literal' = 'x'`),
      );
      // What the old description printed: the wrapper's message is the statement.
      expect(e instanceof Error && e.message).toStartWith('Failed query: select secret_col');
      const d = describeError(e);
      expect(d).not.toMatch(SQL_TEXT);
      expect(d).toContain('[42P01]');
      expect(d).toContain('no_such_table_8271');
    } finally {
      await store.close();
      await target.drop();
    }
  });

  test('a query on a store that went away (real driver): the cause is described; no statement text', async () => {
    const target = await testDatabase();
    const store = await openStore(target.url ? { driver: 'postgres', url: target.url } : { driver: 'pglite', dataDir: 'memory' });
    await store.close();
    const e = await failure(() => store.db.select().from(customers).where(eq(customers.customerId, 'needle-slug')));
    await target.drop();
    const d = describeError(e);
    expect(d).not.toMatch(SQL_TEXT);
    expect(d).toMatch(/closed|ended|CONNECTION/i);
  });

  test('postgres.js-shaped errors: `query` on the error, quoted in its message, or wrapped by drizzle', () => {
    const query = 'select "key_hash", "secret_col" from "api_keys" where "id" = $1';
    const driver = Object.assign(new Error(`could not run: ${query}\nDETAIL: ${query}`), {
      name: 'PostgresError',
      code: '57014',
      query,
      parameters: ['needle-param'],
    });
    const own = describeError(driver);
    expect(own).toBe('PostgresError[57014]: could not run: <query>');
    const wrapped = describeError(
      new DrizzleQueryError(
        query,
        ['needle-param'],
        Object.assign(new Error('canceling statement due to statement timeout'), { name: 'PostgresError', code: '57014', query }),
      ),
    );
    expect(wrapped).toBe('DrizzleQueryError ← PostgresError[57014]: canceling statement due to statement timeout');
    // A wrapper whose statement is not attached (rebuilt from a message) still prints none of it.
    const bare = describeError(new Error(`Failed query: ${query}\nparams: needle-param`));
    expect(bare).toBe('Error');
    for (const d of [own, wrapped, bare]) expect(d).not.toMatch(SQL_TEXT);
  });
});

describe('the management log line while the database is down', () => {
  const lines: string[] = [];
  afterAll(() => {
    setLogSink(undefined);
    setLogLevel('error');
  });

  const outage = async (tg: TestGateway, down: () => Promise<void>): Promise<string[]> => {
    await tg.must(admin('CreateCustomer'), { customerId: 'needle-co' });
    lines.length = 0;
    setLogLevel('warn');
    setLogSink((line) => void lines.push(line));
    await down();
    // The line is logged at most once per 5 s (log.every): calls until one is said.
    const said: string[] = [];
    for (let i = 0; i < 40 && said.length === 0; i++) {
      const r = await tg.call(admin('GetCustomer'), { customerId: 'needle-co' });
      expect(r.status).toBe(503);
      said.push(...lines.filter((l) => l.includes('management operation')));
      if (said.length === 0) await Bun.sleep(250);
    }
    setLogSink(undefined);
    setLogLevel('error');
    expect(said.length).toBeGreaterThan(0);
    return said;
  };

  test('PGlite closed under the gateway: the line names the cause, no SQL', async () => {
    const tg = await startTestGateway({ DATABASE_URL: '' });
    try {
      const said = await outage(tg, async () => {
        await tg.gw.controller.stop();
        await tg.gw.store.close();
      });
      for (const l of said) expect(l).not.toMatch(SQL_TEXT);
      expect(said.join('\n')).toContain('PGlite is closed');
    } finally {
      await tg.stop().catch(() => undefined);
    }
  });

  const skip = throwawayUnavailable();
  test.skipIf(skip !== undefined)(
    'PostgreSQL stopped under the gateway: the line names the cause, no SQL',
    async () => {
      let pg: ThrowawayPostgres | undefined;
      let tg: TestGateway | undefined;
      try {
        pg = await startThrowawayPostgres();
        tg = await startTestGateway({ DATABASE_URL: pg.url });
        const server = pg;
        const said = await outage(tg, async () => server.stop());
        for (const l of said) expect(l).not.toMatch(SQL_TEXT);
        expect(said.join('\n')).toMatch(/ECONNREFUSED|CONNECTION_|terminating/);
      } finally {
        pg?.start();
        await tg?.stop().catch(() => undefined);
        pg?.destroy();
      }
    },
    120_000,
  );
});
