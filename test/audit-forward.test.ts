import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, gte } from 'drizzle-orm';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Gateway, startGateway } from '../src/app.ts';
import { TelemetryForwarder } from '../src/audit/forwarder.ts';
import { loadConfig } from '../src/config/env.ts';
import { generateKek, SecretBox } from '../src/core/secrets.ts';
import { auditLogs, telemetryConfigs } from '../src/store/schema/index.ts';
import { type TestDatabase, testDatabase } from './support/db.ts';
import { ADMIN_TOKEN, admin } from './support/gateway.ts';

/**
 * Audit forwarding (issue 10, deliver 6): telemetry configs of type audit_logs send new entries as
 * OTLP/JSON logs to a sink — here a local receiver that fails on purpose — exactly once across
 * sink failures and a gateway restart on the same database. The receiver is on loopback, so the
 * gateway runs with GATEWAY_UPSTREAM_ALLOW_PRIVATE=1; without it an inward sink is refused
 * (issue 22, defect 7: the upstream address rule applies to sinkUrl).
 */

interface Receiver {
  url: string;
  uids: string[];
  requests: { path: string; auth: string | null; apiKey: string | null }[];
  failNext: number;
  failAll: boolean;
  stop(): void;
}

const startReceiver = (): Receiver => {
  const r: Omit<Receiver, 'url' | 'stop'> = { uids: [], requests: [], failNext: 0, failAll: false };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const body = (await req.json()) as {
        resourceLogs: {
          scopeLogs: { logRecords: { attributes: { key: string; value: { stringValue?: string } }[]; body: { stringValue: string } }[] }[];
        }[];
      };
      r.requests.push({ path: new URL(req.url).pathname, auth: req.headers.get('authorization'), apiKey: req.headers.get('x-sink-key') });
      if (r.failAll || r.failNext > 0) {
        r.failNext = Math.max(0, r.failNext - 1);
        return new Response('overloaded', { status: 503 });
      }
      for (const rl of body.resourceLogs)
        for (const sl of rl.scopeLogs)
          for (const rec of sl.logRecords) {
            const uid = rec.attributes.find((a) => a.key === 'log.record.uid')?.value.stringValue as string;
            expect((JSON.parse(rec.body.stringValue) as { id: string }).id).toBe(uid);
            r.uids.push(uid);
          }
      return Response.json({ partialSuccess: {} });
    },
  });
  return Object.assign(r, { url: `http://127.0.0.1:${server.port}`, stop: () => void server.stop(true) }) as Receiver;
};

const KEK = generateKek();
let dataDir = '';
let target: TestDatabase;
let rx: Receiver;
let gw: Gateway | undefined;

const start = async (): Promise<Gateway> =>
  startGateway(
    loadConfig([], {
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_PORT: '0',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_DEMO: '0',
      GATEWAY_KEK: KEK,
      GATEWAY_LOG_LEVEL: 'error',
      GATEWAY_SHUTDOWN_GRACE: '1s',
      GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1s',
      ...(target.url ? { DATABASE_URL: target.url } : {}),
      GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
    }),
  );

const call = async (op: string, body: unknown, g: Gateway = gw as Gateway) => {
  const res = await fetch(`${g.adminUrl}${admin(op)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const must = async (op: string, body: unknown) => {
  const r = await call(op, body);
  if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

let k = 0;
const insertEntries = async (count: number): Promise<string[]> => {
  const rows = await (gw as Gateway).store.db
    .insert(auditLogs)
    .values(
      Array.from({ length: count }, () => ({
        timestamp: new Date(),
        actorType: 'user',
        actionType: 'UPDATE',
        statusCode: 200,
        success: true,
        resourceId: `r-${++k}`,
      })),
    )
    .returning({ id: auditLogs.id });
  return rows.map((r) => r.id);
};

/** Entries are forwarded once older than the audit lag (the 1 s interval here). */
const pastLag = () => Bun.sleep(1_100);

beforeAll(async () => {
  target = await testDatabase();
  dataDir = target.url ? 'memory://' : mkdtempSync(join(tmpdir(), 'gw-audit-fwd-'));
  rx = startReceiver();
  gw = await start();
});

afterAll(async () => {
  await gw?.stop();
  rx?.stop();
  await target?.drop();
  if (dataDir && dataDir !== 'memory://') rmSync(dataDir, { recursive: true, force: true });
});

describe('telemetry configs', () => {
  test('create/get return authValue decrypted, update does not; at rest it is wrapped; bounds and rules', async () => {
    const created = (await must('CreateTelemetryConfig', {
      userId: 'ops',
      telemetryType: 'traces',
      sinkUrl: 'https://otel.example.com',
      protocol: 'grpc',
      authType: 'bearer',
      authValue: 'tok-123',
    })) as {
      config: Record<string, unknown>;
    };
    expect(created.config).toMatchObject({
      authValue: 'tok-123',
      enabled: true,
      forwardIntervalSeconds: 300,
      status: 'disconnected',
      apiKeyHeader: '',
    });
    const id = created.config.id as string;
    expect(((await must('GetTelemetryConfig', { id })) as { config: Record<string, unknown> }).config.authValue).toBe('tok-123');
    const updated = (await must('UpdateTelemetryConfig', { id, status: 'testing', enabled: false })) as { config: Record<string, unknown> };
    expect(updated.config).toMatchObject({ status: 'testing', enabled: false, sinkUrl: 'https://otel.example.com' });
    expect(updated.config.authValue).toBeUndefined();
    const [row] = await (gw as Gateway).store.db.select().from(telemetryConfigs).where(eq(telemetryConfigs.id, id));
    expect(row?.authValueWrapped).toStartWith('v2:');
    expect(row?.authValueWrapped).not.toContain('tok-123');
    expect(
      (
        await call('CreateTelemetryConfig', {
          userId: 'ops',
          telemetryType: 'audit_logs',
          sinkUrl: 'https://x.example',
          protocol: 'grpc',
          authType: 'none',
        })
      ).body,
    ).toMatchObject({
      code: 'invalid_argument',
    });
    expect(
      (
        await call('CreateTelemetryConfig', {
          userId: 'ops',
          telemetryType: 'logs',
          sinkUrl: 'https://x.example',
          protocol: 'grpc',
          authType: 'basic',
        })
      ).body.message,
    ).toContain('authValue');
    expect((await call('UpdateTelemetryConfig', { id, forwardIntervalSeconds: 86_401 })).status).toBe(400);
    expect(await must('DeleteTelemetryConfig', { id })).toEqual({ success: true });
    expect((await call('GetTelemetryConfig', { id })).status).toBe(404);
    expect((await call('DeleteTelemetryConfig', { id: 'nope' })).status).toBe(404);
  });

  test('TestAuditForward: ok on a 2xx, the reason otherwise', async () => {
    expect(
      await must('TestAuditForward', {
        sinkUrl: rx.url,
        protocol: 'http/json',
        authType: 'api_key',
        authValue: 'k-1',
        apiKeyHeader: 'x-sink-key',
        owner: 'ops',
      }),
    ).toEqual({ ok: true, message: '' });
    expect(rx.requests.at(-1)).toMatchObject({ path: '/v1/logs', apiKey: 'k-1' });
    rx.failNext = 1;
    expect(await must('TestAuditForward', { sinkUrl: `${rx.url}/v1/logs`, protocol: 'http/json', authType: 'none' })).toEqual({
      ok: false,
      message: 'the sink answered HTTP 503',
    });
    const refused = (await must('TestAuditForward', { sinkUrl: 'http://127.0.0.1:1', protocol: 'http/json', authType: 'none' })) as {
      ok: boolean;
      message: string;
    };
    expect(refused.ok).toBe(false);
    expect(refused.message).toBe('cannot reach the sink: refused');
    expect(((await must('TestAuditForward', { sinkUrl: rx.url, protocol: 'grpc', authType: 'none' })) as { ok: boolean }).ok).toBe(false);
    rx.uids.length = 0;
  });
});

describe('audit forwarding', () => {
  let configId = '';
  const expected: string[] = [];
  const status = async () =>
    ((await must('GetTelemetryConfig', { id: configId })) as { config: { status: string; lastCheckedAt?: string } }).config;

  test('sink failures: status error, nothing moves; then every entry exactly once, status connected', async () => {
    const c = (await must('CreateTelemetryConfig', {
      userId: 'ops',
      telemetryType: 'audit_logs',
      sinkUrl: `${rx.url}/`,
      protocol: 'http/json',
      authType: 'bearer',
      authValue: 'sink-secret',
      forwardIntervalSeconds: 1,
    })) as {
      config: { id: string };
    };
    configId = c.config.id;
    // Failing before the entries exist: the timer (1 s) cannot deliver them first.
    rx.failAll = true;
    expected.push(...(await insertEntries(30)));
    await pastLag();
    await must('TriggerAuditForward', { owner: 'test' });
    expect(await status()).toMatchObject({ status: 'error' });
    await must('TriggerAuditForward', {});
    expect(rx.uids).toEqual([]);
    rx.failAll = false;
    await must('TriggerAuditForward', {});
    expect(await status()).toMatchObject({ status: 'connected' });
    // The management calls above are audited too (the config's creation, each trigger): those
    // entries may travel with ours. Ours arrive exactly once, and nothing arrives twice.
    expect(rx.uids.filter((u) => expected.includes(u)).sort()).toEqual([...expected].sort());
    expect(new Set(rx.uids).size).toBe(rx.uids.length);
    expect(rx.requests.at(-1)).toMatchObject({ path: '/v1/logs', auth: 'Bearer sink-secret' });
    // Draining again sends nothing twice.
    await must('TriggerAuditForward', {});
    expect(new Set(rx.uids).size).toBe(rx.uids.length);
    expect(rx.uids.filter((u) => expected.includes(u)).length).toBe(expected.length);
  });

  test('across a gateway restart on the same database, with the sink failing around it: exactly once', async () => {
    rx.failAll = true;
    expected.push(...(await insertEntries(20)));
    await pastLag();
    await must('TriggerAuditForward', {});
    expect(await status()).toMatchObject({ status: 'error' });
    expected.push(...(await insertEntries(5)));
    await (gw as Gateway).stop();
    gw = await start();
    expected.push(...(await insertEntries(10)));
    await Bun.sleep(1_500);
    expect(rx.uids.filter((u) => expected.includes(u)).length).toBe(30);
    rx.failAll = false;
    // The timer (interval 1 s, backoff after the failure) delivers without a trigger.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && new Set(rx.uids).size < expected.length) await Bun.sleep(200);
    const counts = new Map<string, number>();
    for (const u of rx.uids) counts.set(u, (counts.get(u) ?? 0) + 1);
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
    for (const id of expected) expect(counts.get(id)).toBe(1);
    // Whatever else was forwarded is a real entry written after the config was created.
    const [cfg] = await (gw as Gateway).store.db.select().from(telemetryConfigs).where(eq(telemetryConfigs.id, configId));
    const since = new Set(
      (
        await (gw as Gateway).store.db
          .select({ id: auditLogs.id })
          .from(auditLogs)
          .where(gte(auditLogs.timestamp, cfg?.createdAt as Date))
      ).map((r) => r.id),
    );
    for (const u of counts.keys()) expect(since.has(u)).toBe(true);
    expect(await status()).toMatchObject({ status: 'connected' });
  }, 40_000);

  test('two forwarders (replicas) draining at once never send an entry twice', async () => {
    const before = rx.uids.length;
    const fresh = await insertEntries(40);
    await pastLag();
    const db = (gw as Gateway).store.db;
    const secrets = new SecretBox(KEK);
    const a = new TelemetryForwarder(db, secrets, { lagMs: 1_000, version: 'test', allowInward: true });
    const b = new TelemetryForwarder(db, secrets, { lagMs: 1_000, version: 'test', allowInward: true });
    await Promise.all([a.drainAll(), b.drainAll(), a.drainAll(), b.drainAll(), must('TriggerAuditForward', {})]);
    const got = rx.uids.slice(before);
    expect(got.length).toBe(new Set(got).size);
    for (const id of fresh) expect(got).toContain(id);
  });

  test('a disabled config sends nothing, and resumes from its cursor when enabled again', async () => {
    await must('UpdateTelemetryConfig', { id: configId, enabled: false });
    const before = rx.uids.length;
    const later = await insertEntries(3);
    await pastLag();
    await must('TriggerAuditForward', {});
    expect(rx.uids.length).toBe(before);
    await must('UpdateTelemetryConfig', { id: configId, enabled: true });
    await must('TriggerAuditForward', {});
    expect(rx.uids.slice(before).sort()).toEqual(expect.arrayContaining(later.sort()));
    expect(new Set(rx.uids).size).toBe(rx.uids.length);
  });
});

describe('sinkUrl and the upstream address rule (contract §3.1), without GATEWAY_UPSTREAM_ALLOW_PRIVATE', () => {
  let strictDb: TestDatabase;
  let strict: Gateway;
  beforeAll(async () => {
    // The receiver hears only from the gateway under test from here on.
    await (gw as Gateway).store.db.update(telemetryConfigs).set({ enabled: false });
    strictDb = await testDatabase();
    strict = await startGateway(
      loadConfig([], {
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_PORT: '0',
        GATEWAY_DATA_DIR: 'memory://',
        GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
        GATEWAY_DEMO: '0',
        GATEWAY_KEK: KEK,
        GATEWAY_LOG_LEVEL: 'error',
        GATEWAY_SHUTDOWN_GRACE: '1s',
        GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1s',
        ...(strictDb.url ? { DATABASE_URL: strictDb.url } : {}),
      }),
    );
  });
  afterAll(async () => {
    await strict?.stop();
    await strictDb?.drop();
  });
  const on = (op: string, body: unknown) => call(op, body, strict);

  test('TestAuditForward: an inward sink is permission_denied naming sinkUrl, the same answer for an open and a closed port; nothing is sent', async () => {
    const before = rx.requests.length;
    const open = await on('TestAuditForward', { sinkUrl: rx.url, protocol: 'http/json', authType: 'none' });
    const closed = await on('TestAuditForward', { sinkUrl: 'http://127.0.0.1:1', protocol: 'http/json', authType: 'none' });
    for (const r of [open, closed]) {
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ code: 'permission_denied' });
      expect(String(r.body.message)).toContain("'sinkUrl'");
    }
    expect(open.body).toEqual(closed.body);
    for (const url of [
      'http://[::ffff:127.0.0.1]:1',
      'http://10.1.2.3',
      'http://169.254.169.254',
      'http://localhost:1',
      'http://[::ffff:0:7f00:1]:1',
    ])
      expect((await on('TestAuditForward', { sinkUrl: url, protocol: 'http/json', authType: 'none' })).body.code).toBe('permission_denied');
    expect(rx.requests.length).toBe(before);
  });

  test('Create/UpdateTelemetryConfig: an inward sink is refused, whatever the type (every type forwards)', async () => {
    const created = await on('CreateTelemetryConfig', {
      userId: 'ops',
      telemetryType: 'audit_logs',
      sinkUrl: rx.url,
      protocol: 'http/json',
      authType: 'none',
    });
    expect(created.status).toBe(403);
    expect(created.body.code).toBe('permission_denied');
    for (const telemetryType of ['traces', 'metrics', 'logs']) {
      const other = await on('CreateTelemetryConfig', {
        userId: 'ops',
        telemetryType,
        sinkUrl: 'http://127.0.0.1:1',
        protocol: 'grpc',
        authType: 'none',
      });
      expect(other.status).toBe(403);
      expect(other.body.code).toBe('permission_denied');
    }
    // A config stored while inward sinks were allowed (the operator has since turned the setting off).
    const [row] = await strict.store.db
      .insert(telemetryConfigs)
      .values({
        id: crypto.randomUUID(),
        userId: 'ops',
        telemetryType: 'audit_logs',
        sinkUrl: rx.url,
        protocol: 'http/json',
        authType: 'none',
        enabled: true,
        forwardIntervalSeconds: 1,
        cursorTs: new Date(0),
      })
      .returning();
    const moved = await on('UpdateTelemetryConfig', { id: row?.id, sinkUrl: 'http://127.0.0.1:1' });
    expect(moved.status).toBe(403);
    expect(moved.body.code).toBe('permission_denied');
  });

  test('the forwarder re-checks before every send: a stored inward sink gets nothing, status error', async () => {
    const before = rx.requests.length;
    await strict.store.db.insert(auditLogs).values({
      timestamp: new Date(Date.now() - 5_000),
      actorType: 'user',
      actionType: 'UPDATE',
      statusCode: 200,
      success: true,
      resourceId: 'r-strict',
    });
    await (strict.audit.forwarder as TelemetryForwarder).drainAll();
    const fw = new TelemetryForwarder(strict.store.db, new SecretBox(KEK), { lagMs: 1_000, version: 'test' });
    await fw.drainAll();
    expect(rx.requests.length).toBe(before);
    const rows = await strict.store.db.select().from(telemetryConfigs).where(eq(telemetryConfigs.telemetryType, 'audit_logs'));
    expect(rows.map((r) => r.status)).toEqual(['error']);
    // The same store with the setting on: delivered.
    await strict.store.db.update(telemetryConfigs).set({ nextAttemptAt: new Date(0) });
    await new TelemetryForwarder(strict.store.db, new SecretBox(KEK), { lagMs: 1_000, version: 'test', allowInward: true }).drainAll();
    expect(rx.requests.length).toBeGreaterThan(before);
  });
});
