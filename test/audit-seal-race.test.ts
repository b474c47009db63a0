import { afterAll, describe, expect, test } from 'bun:test';
import { asc } from 'drizzle-orm';
import { AuditSealer } from '../src/audit/sealer.ts';
import { verifyAuditLog } from '../src/audit/verify.ts';
import { generateKek, SecretBox } from '../src/core/secrets.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { auditCheckpoints, auditLogs } from '../src/store/schema/index.ts';
import { type Cp, signatureValid } from './support/audit-verifier.ts';
import { testDatabase } from './support/db.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * Sealing with several management replicas on one database (no window sealed twice, no gap), key
 * rotation (old kids stay published while checkpoints need them), the JWKS, and the timer.
 */

const HOUR = 3_600_000;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const entry = (at: number, i: number) => ({
  timestamp: new Date(at),
  actorType: 'system',
  actionType: 'UPDATE',
  statusCode: 200,
  success: true,
  resourceId: `r-${i}`,
});

describe('two sealers racing on one database', () => {
  test('seq without gaps, contiguous windows, every entry in exactly one window', async () => {
    const target = await testDatabase();
    const open = (): Promise<Store> =>
      target.url ? openStore({ driver: 'postgres', url: target.url }) : openStore({ driver: 'pglite', dataDir: 'memory' });
    const a = await open();
    // Replicas are separate processes with their own connection pools (PostgreSQL); PGlite has one process.
    const b = target.url ? await open() : a;
    cleanups.push(async () => {
      if (b !== a) await b.close();
      await a.close();
      await target.drop();
    });
    const secrets = new SecretBox(generateKek());
    const s1 = new AuditSealer(a.db, secrets, { intervalMs: HOUR });
    const s2 = new AuditSealer(b.db, secrets, { intervalMs: HOUR });
    const t0 = Math.floor(Date.now() / HOUR) * HOUR - 30 * HOUR;
    let inserted = 0;
    for (let h = 0; h < 24; h++) {
      const rows = Array.from({ length: 1 + (h % 4) * 3 }, (_, i) => entry(t0 + h * HOUR + Math.floor(Math.random() * HOUR), inserted + i));
      inserted += rows.length;
      await a.db.insert(auditLogs).values(rows);
    }
    for (let h = 0; h < 24; h++) {
      // Both replicas seal at once, with clocks up to an hour apart, several calls each.
      const now = t0 + (h + 1) * HOUR + 31_000;
      await Promise.all([
        s1.sealOnce(new Date(now)),
        s2.sealOnce(new Date(now + (h % 2) * HOUR)),
        s1.sealOnce(new Date(now)),
        s2.sealOnce(new Date(now)),
      ]);
    }
    await Promise.all([s1.sealAll(), s2.sealAll()]);
    const cps = await a.db.select().from(auditCheckpoints).orderBy(asc(auditCheckpoints.seq));
    expect(cps.length).toBeGreaterThan(5);
    cps.forEach((c, i) => {
      expect(c.seq).toBe(i + 1);
      if (i > 0) {
        expect(c.rangeStartTs.getTime()).toBe(cps[i - 1]?.rangeEndTs.getTime() as number);
        expect(Buffer.from(c.prevRootHash).equals(Buffer.from(cps[i - 1]?.rootHash as Uint8Array))).toBe(true);
      }
    });
    expect(cps.reduce((s, c) => s + c.leafCount, 0)).toBe(inserted);
    const rows = await a.db.select({ ts: auditLogs.timestamp }).from(auditLogs);
    for (const r of rows) expect(cps.filter((c) => c.rangeStartTs <= r.ts && r.ts < c.rangeEndTs).length).toBe(1);
  }, 120_000);
});

describe('keys and the timer, in a running gateway', () => {
  let tg: TestGateway;
  type Jwks = { keys: Record<string, unknown>[] };
  const jwks = async (): Promise<Jwks> => (await (await fetch(`${tg.adminUrl}/.well-known/jwks.json`)).json()) as Jwks;
  const checkpoints = async () => ((await tg.must(admin('ListAuditCheckpoints'), {})) as { checkpoints: Cp[] }).checkpoints;

  test('rotation: new checkpoints use the new kid; retired kids stay published only while a checkpoint needs them', async () => {
    tg = await startTestGateway({ GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1h' });
    cleanups.push(() => tg.stop());
    const sealer = tg.gw.audit.sealer as AuditSealer;
    await sealer.stop();
    const t0 = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
    await tg.gw.store.db.insert(auditLogs).values([entry(t0 + 1000, 1), entry(t0 + HOUR + 1000, 2)]);
    await sealer.sealOnce(new Date(t0 + HOUR + 31_000));
    const rotated = (await tg.must(admin('RotateAuditSigningKey'), { reason: 'yearly' })) as { kid: string; retiredKid: string };
    await sealer.sealOnce(new Date(t0 + 2 * HOUR + 31_000));
    const [c1, c2] = await checkpoints();
    expect(c1?.signingKid).toBe(rotated.retiredKid);
    expect(c2?.signingKid).toBe(rotated.kid);
    const keys = await jwks();
    for (const c of [c1, c2] as Cp[]) expect(await signatureValid(c, keys)).toBe(true);
    // A key retired before it signed anything is no longer published; the ones that signed stay.
    const unused = (await tg.must(admin('RotateAuditSigningKey'), {})) as { kid: string; retiredKid: string };
    expect(unused.retiredKid).toBe(rotated.kid);
    const third = (await tg.must(admin('RotateAuditSigningKey'), {})) as { kid: string; retiredKid: string };
    const kids = (await jwks()).keys.filter((k) => k.kty === 'OKP').map((k) => k.kid);
    expect(kids.sort()).toEqual([rotated.retiredKid, rotated.kid, third.kid].sort());
    expect(kids).not.toContain(unused.kid);
    const verdict = await verifyAuditLog({ endpoint: tg.adminUrl, token: ADMIN_TOKEN });
    expect(verdict).toMatchObject({ ok: true, checkpoints: 2, failures: [] });
  }, 30_000);

  test('the JWKS also publishes the user-token signing keys (RS256)', async () => {
    await tg.must(admin('CreateCustomer'), { customerId: 'jwks-co' });
    await tg.must(admin('CreateUserToken'), {
      customerId: 'jwks-co',
      workspaceId: 'ws',
      userId: 'u1',
      organizationUnit: 'ou',
      role: 'user',
    });
    const rsa = (await jwks()).keys.filter((k) => k.kty === 'RSA');
    expect(rsa.length).toBe(1);
    expect(rsa[0]).toMatchObject({ alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(String(rsa[0]?.kid)).toStartWith('uk_');
    expect(rsa[0]?.d).toBeUndefined();
    const res = await fetch(`${tg.adminUrl}/.well-known/jwks.json`);
    expect(res.headers.get('content-type')).toContain('application/json');
  }, 30_000);

  test('the management process seals on its timer; stop ends it', async () => {
    const live = await startTestGateway({ GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1s' });
    try {
      await live.gw.store.db.insert(auditLogs).values([entry(Date.now() - 5_000, 1)]);
      let sealed: Cp[] = [];
      for (let i = 0; i < 40 && sealed.length === 0; i++) {
        await Bun.sleep(250);
        sealed = ((await live.must(admin('ListAuditCheckpoints'), {})) as { checkpoints: Cp[] }).checkpoints;
      }
      expect(sealed.map((c) => [c.seq, c.leafCount])).toEqual([['1', '1']]);
    } finally {
      await live.stop();
    }
  }, 30_000);
});
