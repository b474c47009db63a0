import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { openStore, type Store } from '../src/store/db.ts';
import { execOf } from '../src/store/pglite.ts';
import { customers } from '../src/store/schema/index.ts';

/**
 * The embedded store in its own thread (store/pglite-worker.ts) as the rest of the gateway uses
 * it through drizzle and `exec`: errors keep PostgreSQL's fields, transactions commit or roll
 * back as their callback ends, a query outside a transaction waits for it, LISTEN is relayed,
 * and a closed store answers as PGlite's own does (which the gateway maps to 503).
 */
describe.skipIf(Boolean(process.env.TEST_DATABASE_URL))('the embedded store in its own thread', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore({ driver: 'pglite', dataDir: 'memory' });
  });
  afterAll(async () => {
    await store.close();
  });

  test('a refused statement keeps its SQLSTATE and constraint', async () => {
    await store.db.insert(customers).values({ customerId: 'dup-co' });
    const e = await store.db
      .insert(customers)
      .values({ customerId: 'dup-co' })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    const cause: unknown = e instanceof Error ? e.cause : undefined;
    expect(cause).toBeInstanceOf(Error);
    expect(Reflect.get(cause as Error, 'code')).toBe('23505');
    expect(String(Reflect.get(cause as Error, 'constraint'))).toContain('customer');
  });

  test('a transaction commits when its callback resolves and rolls back when it throws', async () => {
    await store.db.transaction(async (tx) => {
      await tx.insert(customers).values({ customerId: 'kept-co' });
    });
    const failed = await store.db
      .transaction(async (tx) => {
        await tx.insert(customers).values({ customerId: 'gone-co' });
        throw new Error('changed my mind');
      })
      .then(
        () => 'committed',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
    expect(failed).toBe('changed my mind');
    const names = (await store.db.select({ id: customers.customerId }).from(customers)).map((r) => r.id);
    expect(names).toContain('kept-co');
    expect(names).not.toContain('gone-co');
  });

  test('a query outside an open transaction waits for it, then sees its commit', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const tx = store.db.transaction(async (t) => {
      await t.insert(customers).values({ customerId: 'late-co' });
      await held;
    });
    await Bun.sleep(20);
    const outside = store.db.select({ id: customers.customerId }).from(customers).where(eq(customers.customerId, 'late-co'));
    let answered = false;
    void outside.then(() => {
      answered = true;
    });
    await Bun.sleep(50);
    expect(answered).toBe(false);
    release();
    await tx;
    expect((await outside).length).toBe(1);
  });

  test('exec runs several statements in one round trip; LISTEN is relayed to this thread', async () => {
    const exec = execOf(store.db);
    expect(exec).toBeDefined();
    const results = await exec?.('select 1 as a; select 2 as b');
    expect(Array.isArray(results) ? results.length : 0).toBe(2);
    const heard: string[] = [];
    const stop = await store.listen?.('store_thread_test', (p) => heard.push(p));
    await store.db.execute(sql`select pg_notify('store_thread_test', 'hello')`);
    for (let i = 0; i < 50 && heard.length === 0; i++) await Bun.sleep(10);
    expect(heard).toEqual(['hello']);
    await stop?.();
  });

  test('queries the thread had not answered when the store closed are refused, not left pending', async () => {
    const other = await openStore({ driver: 'pglite', dataDir: 'memory' });
    // Sent just before the close, in the same turn: some are still in the thread when it ends.
    const sent = Array.from({ length: 200 }, () =>
      other.db
        .select()
        .from(customers)
        .then(
          () => 'answered',
          () => 'refused',
        ),
    );
    await other.close();
    const outcome = await Promise.race([Promise.all(sent), Bun.sleep(3_000).then(() => 'still pending')]);
    expect(outcome).not.toBe('still pending');
  });

  test('a closed store refuses as PGlite does (the gateway answers 503)', async () => {
    const other = await openStore({ driver: 'pglite', dataDir: 'memory' });
    await other.close();
    const e = await other.db.execute(sql`select 1`).then(
      () => undefined,
      (x: unknown) => x,
    );
    const message = e instanceof Error ? `${e.message} ${e.cause instanceof Error ? e.cause.message : ''}` : '';
    expect(message).toContain('PGlite is closed');
  });
});
