import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { asc, eq } from 'drizzle-orm';
import { join } from 'node:path';
import { auditCheckpoints, type AuditLogRow, auditLogs, signingKeys } from '../src/store/schema/index.ts';
import { b64, type Cp, leafOf, mth, path, signatureValid, unb64, verifyInclusion } from './support/audit-verifier.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * Audit checkpoints (issue 10, deliver 3-5): sealing, the chain, signatures, rebuild, inclusion
 * proofs and `bun run audit:verify`, checked by an independent RFC 6962 + Ed25519 verifier; then
 * the log is tampered with directly in the database (edit, delete, insert) and every check must
 * catch it and name the window.
 */

const HOUR = 3_600_000;
let tg: TestGateway;
let t0: number;
const ids: string[][] = [[], [], []];
let unsealedId = '';

type Db = TestGateway['gw']['store']['db'];
const db = (): Db => tg.gw.store.db;

let n = 0;
const insertEntry = async (at: number, extra: Partial<typeof auditLogs.$inferInsert> = {}): Promise<string> => {
  n++;
  const [row] = await db()
    .insert(auditLogs)
    .values({
      timestamp: new Date(at),
      actorType: n % 2 ? 'user' : 'system',
      actionType: ['CREATE', 'UPDATE', 'DELETE'][n % 3] as string,
      resourceType: 'customer',
      resourceId: `c-${n}`,
      endpoint: '/admin.v1.AdminService/CreateCustomer',
      statusCode: 200,
      success: true,
      userId: `user-${n}`,
      userEmail: `u${n}@example.com`,
      metadata: { n, nested: { é: 'ü', list: [1, 2.5, 'x'], z: null }, '\u20ac': true },
      requestBody: { customerId: `c-${n}`, name: 'Ünïcødé 😀' },
      ...extra,
    })
    .returning({ id: auditLogs.id });
  return (row as { id: string }).id;
};

/** The wire form of a stored row, written here from the seed (not the code under test). */
const wire = (r: AuditLogRow) => ({
  id: r.id,
  timestamp: r.timestamp.toISOString(),
  createdAt: r.createdAt.toISOString(),
  userId: r.userId,
  userEmail: r.userEmail,
  actorType: r.actorType,
  actionType: r.actionType,
  resourceType: r.resourceType,
  resourceId: r.resourceId,
  endpoint: r.endpoint,
  httpMethod: r.httpMethod,
  statusCode: r.statusCode,
  success: r.success,
  errorMessage: r.errorMessage,
  correlationId: r.correlationId,
  sourceIp: r.sourceIp,
  userAgent: r.userAgent,
  metadata: r.metadata,
  requestBody: r.requestBody,
  requestParams: r.requestParams,
  responseData: r.responseData,
});

interface CpOut extends Cp {
  contentRootHash?: string;
  contentLeafCount?: string;
  kekVersion: number;
}

const list = async (rebuild = false): Promise<CpOut[]> =>
  ((await tg.must(admin('ListAuditCheckpoints'), { rebuild })) as { checkpoints: CpOut[] }).checkpoints;
const jwks = async () => (await (await fetch(`${tg.adminUrl}/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
const proofOf = async (id: string) =>
  (await tg.must(admin('GetAuditInclusionProof'), { auditLogId: id })) as {
    found: boolean;
    reason: string;
    checkpoint?: CpOut;
    leafHash: string;
    leafIndex: string;
    proof: string[];
    treeSize: string;
  };

/** Independent leaves of a window as stored now, in (timestamp, id) order. */
const leavesOf = async (cp: Cp): Promise<{ ids: string[]; hashes: Uint8Array[] }> => {
  const rows = (await db().select().from(auditLogs).orderBy(asc(auditLogs.timestamp), asc(auditLogs.id))).filter(
    (r) => r.timestamp.getTime() >= Date.parse(cp.rangeStartTs) && r.timestamp.getTime() < Date.parse(cp.rangeEndTs),
  );
  return { ids: rows.map((r) => r.id), hashes: rows.map((r) => leafOf(wire(r))) };
};

/** The independent verdict on one entry's proof: does it lead to the sealed root? */
const proofHolds = async (id: string): Promise<boolean> => {
  const p = await proofOf(id);
  if (!p.found || !p.checkpoint) return false;
  return (
    Number(p.treeSize) === Number(p.checkpoint.leafCount) &&
    verifyInclusion(unb64(p.leafHash), Number(p.leafIndex), Number(p.treeSize), p.proof.map(unb64), unb64(p.checkpoint.rootHash))
  );
};

const runVerify = async (entry?: string): Promise<{ code: number; out: string }> => {
  const proc = Bun.spawn(
    ['bun', 'run', 'audit:verify', '--endpoint', tg.adminUrl, '--token', ADMIN_TOKEN, ...(entry ? ['--entry', entry] : [])],
    {
      cwd: join(import.meta.dir, '..'),
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out: out + err };
};

beforeAll(async () => {
  tg = await startTestGateway({ GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1h' });
  // The test drives sealing with its own clock.
  await tg.gw.audit.sealer?.stop();
  t0 = Math.floor(Date.now() / HOUR) * HOUR - 10 * HOUR;
  for (let w = 0; w < 3; w++) {
    const count = [5, 7, 3][w] as number;
    for (let i = 0; i < count; i++) (ids[w] as string[]).push(await insertEntry(t0 + w * HOUR + 60_000 + i * 1000));
  }
  // Two entries with the same timestamp: ordered by id.
  (ids[1] as string[]).push(await insertEntry(t0 + HOUR + 120_000), await insertEntry(t0 + HOUR + 120_000));
  unsealedId = await insertEntry(t0 + 3 * HOUR + 60_000);
  const sealer = tg.gw.audit.sealer;
  if (!sealer) throw new Error('no sealer');
  for (let w = 1; w <= 3; w++) expect(await sealer.sealOnce(new Date(t0 + w * HOUR + 31_000))).toBeDefined();
  // Nothing more is closed at that clock.
  expect(await sealer.sealOnce(new Date(t0 + 3 * HOUR + 31_000))).toBeUndefined();
}, 60_000);

afterAll(async () => {
  await tg?.stop();
});

describe('an untouched log', () => {
  test('checkpoints chain, sign and hash as RFC 6962 + Ed25519 say (independent verifier)', async () => {
    const cps = await list();
    const keys = await jwks();
    expect(cps.map((c) => c.seq)).toEqual(['1', '2', '3']);
    let prev: CpOut | undefined;
    for (const c of cps) {
      expect(c.algo).toBe('rfc6962-sha256+ed25519');
      expect(c.prevRootHash).toBe(prev ? prev.rootHash : '');
      if (prev) expect(c.rangeStartTs).toBe(prev.rangeEndTs);
      expect(c.kekVersion).toBe(1);
      expect(await signatureValid(c, keys)).toBe(true);
      const leaves = await leavesOf(c);
      expect(c.leafCount).toBe(String(leaves.ids.length));
      expect(c.rootHash).toBe(b64(mth(leaves.hashes)));
      expect(c.rangeStartId).toBe(leaves.ids[0] as string);
      expect(c.rangeEndId).toBe(leaves.ids.at(-1) as string);
      prev = c;
    }
    expect(cps.map((c) => c.leafCount)).toEqual(['5', '9', '3']);
    expect(cps[0]?.rangeStartTs).toBe(new Date(t0 + 60_000).toISOString());
    expect(cps[2]?.rangeEndTs).toBe(new Date(t0 + 3 * HOUR).toISOString());
    // A signature over anything else fails.
    expect(await signatureValid({ ...(cps[1] as CpOut), leafCount: '10' }, keys)).toBe(false);
  });

  test('rebuild recomputes every window to the sealed root and count', async () => {
    for (const c of await list(true)) {
      expect(c.contentRootHash).toBe(c.rootHash);
      expect(c.contentLeafCount).toBe(c.leafCount);
    }
    expect((await list(false))[0]?.contentRootHash).toBeUndefined();
  });

  test('every sealed entry has an inclusion proof equal to RFC 6962 PATH, leading to the sealed root', async () => {
    for (const c of await list()) {
      const leaves = await leavesOf(c);
      for (const [i, id] of leaves.ids.entries()) {
        const p = await proofOf(id);
        expect(p.found).toBe(true);
        expect(p.checkpoint?.seq).toBe(c.seq);
        expect(p.leafIndex).toBe(String(i));
        expect(p.treeSize).toBe(c.leafCount);
        expect(p.leafHash).toBe(b64(leaves.hashes[i] as Uint8Array));
        expect(p.proof).toEqual(path(i, leaves.hashes).map(b64));
        expect(await proofHolds(id)).toBe(true);
      }
    }
  });

  test('unsealed and missing entries say so', async () => {
    expect(await proofOf(unsealedId)).toMatchObject({ found: false, reason: 'unsealed', proof: [] });
    expect(await proofOf('00000000-0000-4000-8000-000000000000')).toMatchObject({ found: false, reason: 'row_missing' });
    expect(await proofOf('not-a-uuid')).toMatchObject({ found: false, reason: 'row_missing' });
  });

  test('paging: afterSeq is strictly greater, limit caps', async () => {
    const page = ((await tg.must(admin('ListAuditCheckpoints'), { afterSeq: '1', limit: 1 })) as { checkpoints: CpOut[] }).checkpoints;
    expect(page.map((c) => c.seq)).toEqual(['2']);
    const all = ((await tg.must(admin('ListAuditCheckpoints'), { afterSeq: 0, limit: 100_000 })) as { checkpoints: CpOut[] }).checkpoints;
    expect(all.length).toBe(3);
    expect((await tg.call(admin('ListAuditCheckpoints'), { limit: -1 })).status).toBe(400);
  });

  test('audit:verify passes, with and without an entry', async () => {
    const r = await runVerify(ids[1]?.[2]);
    expect(r.out).toContain('OK: 3 checkpoint(s)');
    expect(r.code).toBe(0);
    expect((await runVerify()).code).toBe(0);
  });

  test('the signing key is Ed25519, published by kid, private part wrapped with the KEK', async () => {
    const [row] = await db().select().from(signingKeys).where(eq(signingKeys.purpose, 'audit'));
    expect(row?.privateKeyWrapped.startsWith('v2:')).toBe(true);
    expect(row?.privateKeyWrapped).not.toContain('PRIVATE KEY');
    const published = (await jwks()).keys.find((k) => k.kid === row?.kid);
    expect(published).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(published?.d).toBeUndefined();
  });
});

/** Runs a tamper, checks that rebuild, the proofs and audit:verify all catch it in `seq`, then undoes it. */
const tampered = async (seq: string, probe: string, tamper: () => Promise<void>, undo: () => Promise<void>, why: RegExp) => {
  await tamper();
  try {
    const cps = await list(true);
    for (const c of cps) {
      const broken = c.contentRootHash !== c.rootHash || c.contentLeafCount !== c.leafCount;
      expect(`${c.seq}:${broken}`).toBe(`${c.seq}:${c.seq === seq}`);
    }
    const p = await proofOf(probe);
    expect(p.checkpoint?.seq).toBe(seq);
    expect(await proofHolds(probe)).toBe(false);
    const r = await runVerify(probe);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(`FAIL: checkpoint seq ${seq} (window`);
    expect(r.out).toMatch(why);
    expect(r.out).toContain(`entry ${probe} in checkpoint seq ${seq}`);
  } finally {
    await undo();
  }
  const r = await runVerify(probe);
  expect(r.code).toBe(0);
};

describe('tampering in the database is caught and the window named', () => {
  test('a field of a sealed entry edited', async () => {
    const id = ids[1]?.[3] as string;
    const [before] = await db().select().from(auditLogs).where(eq(auditLogs.id, id));
    await tampered(
      '2',
      id,
      async () => void (await db().update(auditLogs).set({ userEmail: 'someone-else@example.com' }).where(eq(auditLogs.id, id))),
      async () =>
        void (await db()
          .update(auditLogs)
          .set({ userEmail: before?.userEmail as string })
          .where(eq(auditLogs.id, id))),
      /entries changed since sealing/,
    );
  });

  test('a sealed entry deleted', async () => {
    const id = ids[0]?.[2] as string;
    const probe = ids[0]?.[4] as string;
    const [before] = await db().select().from(auditLogs).where(eq(auditLogs.id, id));
    await tampered(
      '1',
      probe,
      async () => void (await db().delete(auditLogs).where(eq(auditLogs.id, id))),
      async () =>
        void (await db()
          .insert(auditLogs)
          .values(before as AuditLogRow)),
      /holds 4 entries now, 5 when sealed/,
    );
    // The deleted entry itself has no proof.
    await db().delete(auditLogs).where(eq(auditLogs.id, id));
    expect(await proofOf(id)).toMatchObject({ found: false, reason: 'row_missing' });
    const r = await runVerify(id);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(`entry ${id}: no inclusion proof (row_missing)`);
    await db()
      .insert(auditLogs)
      .values(before as AuditLogRow);
  });

  test('an entry inserted into a sealed window', async () => {
    let forged = '';
    await tampered(
      '3',
      ids[2]?.[0] as string,
      async () => {
        forged = await insertEntry(t0 + 2 * HOUR + 30_000);
      },
      async () => void (await db().delete(auditLogs).where(eq(auditLogs.id, forged))),
      /holds 4 entries now, 3 when sealed/,
    );
  });

  test('a checkpoint row edited (root replaced) breaks its signature and the chain', async () => {
    const [cp] = await db().select().from(auditCheckpoints).where(eq(auditCheckpoints.seq, 2));
    await db()
      .update(auditCheckpoints)
      .set({ rootHash: new Uint8Array(32) })
      .where(eq(auditCheckpoints.seq, 2));
    try {
      const r = await runVerify();
      expect(r.code).not.toBe(0);
      expect(r.out).toContain('FAIL: checkpoint seq 2 (window');
      expect(r.out).toContain('bad signature');
      expect(r.out).toContain('checkpoint seq 3');
    } finally {
      await db()
        .update(auditCheckpoints)
        .set({ rootHash: cp?.rootHash as Uint8Array })
        .where(eq(auditCheckpoints.seq, 2));
    }
    expect((await runVerify()).code).toBe(0);
  });
});
