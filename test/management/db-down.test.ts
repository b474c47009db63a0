import { afterAll, describe, expect, test } from 'bun:test';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startThrowawayPostgres, type ThrowawayPostgres, throwawayUnavailable } from '../support/throwaway-pg.ts';
import { GHOST, OPS } from './op-table.ts';
import type { Body } from './support.ts';

/**
 * The database goes away (issue 7, defect 9): every management operation answers 503
 * `unavailable` with a generic message — never 500 `internal`, never the driver's text — and
 * `/readyz` on the admin listener says the database is unreachable. When it comes back, so does
 * the API. PostgreSQL: a throw-away server of this test's own, stopped as abruptly as a crash;
 * PGlite: the embedded database closed under the running gateway.
 */

const DRIVER_TEXT = /ECONNREFUSED|ECONNRESET|CONNECTION_|connect|127\.0\.0\.1|postgres|pglite|closed|socket|terminat/i;

const userToken = async (tg: TestGateway): Promise<string> => {
  await tg.must(admin('CreateCustomer'), { customerId: 'acme' });
  await tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'alice', role: 'admin' });
  const t = await tg.must(admin('CreateUserToken'), {
    customerId: 'acme',
    workspaceId: 'w',
    userId: 'alice',
    organizationUnit: 'o',
    role: 'r',
  });
  return String(t.accessToken);
};

/** Every operation (valid bodies) with the admin token, and a few with a user token. */
const sweep = async (tg: TestGateway, user: string): Promise<string[]> => {
  const out: string[] = [];
  // ExchangeOidcToken reads no store before its issuer (none here: failed_precondition); test/sso.test.ts covers it.
  for (const c of OPS.filter((o) => !o.path.endsWith('/ExchangeOidcToken'))) {
    const r = await tg.call(c.path, c.base(GHOST), ADMIN_TOKEN);
    out.push(
      `${c.path.split('/').pop()}: ${r.status} ${String(r.body.code)}${DRIVER_TEXT.test(String(r.body.message)) ? ` leaks '${String(r.body.message)}'` : ''}`,
    );
  }
  for (const op of ['GetProject', 'ListProjectMembers']) {
    const r = await tg.call(admin(op), { customerId: 'acme', projectId: 'default' }, user);
    out.push(`${op} (user token): ${r.status} ${String(r.body.code)}`);
  }
  return out;
};
/** Operations that never touch the database (they work while it is down). */
const DATABASE_FREE = new Set(['TestAuditForward']);
/**
 * Operations that check something outside the database first: CreateA2aAgent fetches the agent's card
 * before its transaction (no card is served at the base input's URL: refused whatever the database).
 */
const BEFORE_THE_DATABASE: Record<string, string> = { CreateA2aAgent: '400 failed_precondition' };
const allUnavailable = (): string[] => [
  ...OPS.filter((o) => !o.path.endsWith('/ExchangeOidcToken'))
    .map((c) => c.path.split('/').pop() as string)
    .map((op) => (DATABASE_FREE.has(op) ? `${op}: 200 undefined` : `${op}: ${BEFORE_THE_DATABASE[op] ?? '503 unavailable'}`)),
  'GetProject (user token): 503 unavailable',
  'ListProjectMembers (user token): 503 unavailable',
];

const readyz = async (tg: TestGateway): Promise<{ status: number; body: Body }> => {
  const r = await fetch(`${tg.adminUrl}/readyz`);
  return { status: r.status, body: (await r.json()) as Body };
};

const skip = throwawayUnavailable();
if (skip) console.warn(`db-down (PostgreSQL) skipped: ${skip}`);

describe.skipIf(skip !== undefined)('PostgreSQL stopped under the running gateway', () => {
  let pg: ThrowawayPostgres | undefined;
  let tg: TestGateway | undefined;
  afterAll(async () => {
    pg?.start();
    await tg?.stop().catch(() => undefined);
    pg?.destroy();
  }, 60_000);

  test('every operation answers 503 unavailable; /readyz says the database is unreachable; both recover', async () => {
    pg = await startThrowawayPostgres();
    tg = await startTestGateway({ DATABASE_URL: pg.url });
    const user = await userToken(tg);
    expect((await readyz(tg)).status).toBe(200);

    pg.stop();
    expect(await sweep(tg, user)).toEqual(allUnavailable());
    const down = await readyz(tg);
    expect(down).toEqual({ status: 503, body: { status: 'unavailable', database: 'unreachable', metrics: 'off' } });

    pg.start();
    // postgres.js reconnects on the next query.
    let back = 0;
    for (let i = 0; i < 50 && back !== 200; i++) {
      back = (await tg.call(admin('ListCustomers'), {})).status;
      if (back !== 200) await Bun.sleep(100);
    }
    expect(back).toBe(200);
    expect((await tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, user)).status).toBe(200);
    expect(await readyz(tg)).toEqual({ status: 200, body: { status: 'ok', database: 'ok', metrics: 'off' } });
    await tg.stop();
    tg = undefined;
  }, 120_000);
});

describe('PGlite closed under the running gateway', () => {
  test('every operation answers 503 unavailable; /readyz says the database is unreachable', async () => {
    const tg = await startTestGateway({ DATABASE_URL: '' });
    try {
      if (tg.gw.store.driver !== 'pglite') throw new Error('expected the embedded store');
      const user = await userToken(tg);
      await tg.gw.controller.stop();
      await tg.gw.store.close();
      expect(await sweep(tg, user)).toEqual(allUnavailable());
      expect(await readyz(tg)).toEqual({ status: 503, body: { status: 'unavailable', database: 'unreachable', metrics: 'off' } });
    } finally {
      await tg.stop().catch(() => undefined);
    }
  }, 60_000);
});
