import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import type { AuditSealer } from '../src/audit/sealer.ts';
import { main, verifyAuditLog } from '../src/audit/verify.ts';
import { auditLogs } from '../src/store/schema/index.ts';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './support/gateway.ts';
import { settled } from './support/settled.ts';

/**
 * `audit:verify` talks to the management API through the one typed client (src/api/client.ts,
 * issue 23 item 2): a 5xx answer is retried, an answer that does not match the operation's
 * response schema is refused by name, a refusal names the operation and its Connect code — and an
 * older server without GetAuditLog still verifies, with a note. A proxy in front of a real gateway
 * plays the faulty server.
 */

const HOUR = 3_600_000;
let tg: TestGateway;
let proxy: ReturnType<typeof Bun.serve>;
let entryId = '';
/** How the proxy answers a call of an operation, or undefined to pass it through. */
let fault: ((operation: string, upstream: () => Promise<Response>) => Promise<Response | undefined>) | undefined;
const seen: string[] = [];

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

beforeAll(async () => {
  tg = await startTestGateway({ GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1h' });
  const sealer = tg.gw.audit.sealer as AuditSealer;
  await sealer.stop();
  const t0 = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
  const [row] = await tg.gw.store.db
    .insert(auditLogs)
    .values(
      [0, 1, 2].map((i) => ({
        timestamp: new Date(t0 + i * HOUR + 1000),
        actorType: 'system',
        actionType: 'UPDATE',
        statusCode: 200,
        success: true,
        resourceId: `r-${i}`,
      })),
    )
    .returning({ id: auditLogs.id });
  entryId = row?.id ?? '';
  await sealer.sealOnce(new Date(t0 + HOUR + 31_000));
  await sealer.sealOnce(new Date(t0 + 2 * HOUR + 31_000));
  proxy = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const url = new URL(req.url);
      const operation = url.pathname.split('/').at(-1) ?? '';
      seen.push(operation);
      const body = req.method === 'POST' ? await req.text() : undefined;
      const upstream = () =>
        fetch(`${tg.adminUrl}${url.pathname}`, { method: req.method, headers: req.headers, ...(body !== undefined ? { body } : {}) });
      return (await fault?.(operation, upstream)) ?? upstream();
    },
  });
}, 30_000);

afterAll(async () => {
  await proxy?.stop(true);
  await tg?.stop();
});

const endpoint = () => `http://127.0.0.1:${proxy.port}`;
const run = async (f: typeof fault) => {
  fault = f;
  seen.length = 0;
  try {
    return await verifyAuditLog({ endpoint: endpoint(), token: ADMIN_TOKEN, entry: entryId, attempts: 3 });
  } finally {
    fault = undefined;
  }
};

describe('audit:verify on the management client', () => {
  test('the sealed checkpoints verify through the proxy', async () => {
    expect(await run(undefined)).toMatchObject({ ok: true, checkpoints: 2, failures: [], notes: [] });
  });

  test('a 5xx answer is retried, not taken as the verdict', async () => {
    let refused = 0;
    const r = await run(async (op) =>
      op === 'ListAuditCheckpoints' && refused++ === 0
        ? json(503, { code: 'unavailable', message: 'the database is unavailable' })
        : undefined,
    );
    expect(r).toMatchObject({ ok: true, checkpoints: 2, failures: [] });
    expect(seen.filter((op) => op === 'ListAuditCheckpoints').length).toBe(2);
  });

  test('an answer that does not match the response schema is refused, naming the operation and the field', async () => {
    const stripSignature = async (op: string, upstream: () => Promise<Response>) => {
      if (op !== 'ListAuditCheckpoints') return undefined;
      const body = (await (await upstream()).json()) as { checkpoints: Record<string, unknown>[] };
      return json(200, { checkpoints: body.checkpoints.map(({ signature: _, ...rest }) => rest) });
    };
    await expect((await settled(run(stripSignature))).promise).rejects.toThrow(
      /^ListAuditCheckpoints: the answer does not match its schema \(\/checkpoints\/0/,
    );
  });

  test('a server without GetAuditLog: the leaf hash is taken from the proof, with a note', async () => {
    const r = await run(async (op) => (op === 'GetAuditLog' ? json(404, { code: 'not_found', message: 'unknown operation' }) : undefined));
    expect(r).toMatchObject({
      ok: true,
      checkpoints: 2,
      failures: [],
      notes: ['this server has no GetAuditLog: the leaf hash was taken from the proof'],
    });
    // An unknown entry is no such case: its refusal is the verdict.
    await expect(
      (
        await settled(
          run(async (op) => (op === 'GetAuditLog' ? json(404, { code: 'not_found', message: 'audit log entry not found' }) : undefined)),
        )
      ).promise,
    ).rejects.toThrow('GetAuditLog: not_found: audit log entry not found');
  });

  test('the command line prints a refusal with its operation and Connect code, and exits 1', async () => {
    const errors: string[] = [];
    const spy = spyOn(console, 'error').mockImplementation((...a: unknown[]) => void errors.push(a.join(' ')));
    try {
      expect(await main(['--endpoint', endpoint(), '--token', 'not-the-admin-token'])).toBe(1);
    } finally {
      spy.mockRestore();
    }
    expect(errors).toEqual([expect.stringMatching(/^FAIL: ListAuditCheckpoints: unauthenticated: /)]);
  });
});
