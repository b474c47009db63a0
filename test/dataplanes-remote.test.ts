import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { generateKek } from '../src/core/secrets.ts';
import { testDatabase, type TestDatabase } from './support/db.ts';

/**
 * One management process (PostgreSQL with TEST_DATABASE_URL, else the embedded store in a data
 * directory) and two data-plane processes (`serve --role data --service-account FILE`) on
 * loopback: changes reach both; a stopped data plane converges after its restart; with the
 * management plane stopped both keep serving and their records arrive once it is back; a revoked
 * account is refused at the next pull and /readyz says so.
 */

const ROOT = join(import.meta.dir, '..');
const TOKEN = 'test-admin-token-0123456789';
const KEK = generateKek();
type Body = Record<string, unknown>;

const freePort = (): number => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
  const p = s.port as number;
  s.stop(true);
  return p;
};

let dir: string;
let db: TestDatabase;
const adminPort = freePort();
const adminUrl = `http://127.0.0.1:${adminPort}`;
let mp: Subprocess | undefined;
const planes: Record<'a' | 'b', { port: number; proc: Subprocess | undefined; file: string; saId: string }> = {
  a: { port: freePort(), proc: undefined, file: '', saId: '' },
  b: { port: freePort(), proc: undefined, file: '', saId: '' },
};
let apiKey = '';

const spawn = (args: string[], env: Record<string, string>): Subprocess =>
  Bun.spawn(['bun', 'src/main.ts', 'serve', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GATEWAY_LOG_LEVEL: 'error',
      WORKER_POLL_INTERVAL: '200ms',
      GATEWAY_RECORD_FLUSH_INTERVAL: '100ms',
      GATEWAY_SHUTDOWN_GRACE: '1s',
      ...env,
    },
    stdout: 'ignore',
    stderr: 'inherit',
  });

const until = async <T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await Bun.sleep(100);
  }
};

const startMp = async () => {
  mp = spawn(['--role', 'control'], {
    GATEWAY_ADMIN_PORT: String(adminPort),
    GATEWAY_PORT: '0',
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_KEK: KEK,
    GATEWAY_DEMO: '0',
    ...(db.url ? { DATABASE_URL: db.url } : { GATEWAY_DATA_DIR: join(dir, 'mp') }),
  });
  await until('management plane', async () => ((await fetch(`${adminUrl}/healthz`)).ok ? true : undefined), 60_000);
};
const stop = async (p: Subprocess | undefined) => {
  if (!p) return;
  p.kill('SIGTERM');
  await p.exited;
};
const startPlane = async (name: 'a' | 'b') => {
  const pl = planes[name];
  pl.proc = spawn(['--role', 'data', '--service-account', pl.file], { GATEWAY_PORT: String(pl.port), GATEWAY_DATA_DIR: join(dir, name) });
  await until(`data plane ${name}`, async () => ((await fetch(`http://127.0.0.1:${pl.port}/healthz`)).ok ? true : undefined), 30_000);
};

const call = async (op: string, body: Body, service = 'admin.v1.AdminService'): Promise<Body> => {
  const res = await fetch(`${adminUrl}/${service}/${op}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const out = (await res.json()) as Body;
  if (res.status !== 200) throw new Error(`${op} → ${res.status} ${JSON.stringify(out)}`);
  return out;
};

/** A catalog model assigned to acme/web. */
const addModel = async (model: string) => {
  const id = String(((await call('CreateModel', { model, provider: 'echo' })).model as Body).id);
  await call('AddProjectModel', { customerId: 'acme', projectId: 'web', modelId: id });
};

const chat = async (name: 'a' | 'b', model: string): Promise<{ status: number; requestId: string }> => {
  const res = await fetch(`http://127.0.0.1:${planes[name].port}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return { status: res.status, requestId: res.headers.get('x-request-id') ?? '' };
};
const bothReach = (model: string, status: (s: number) => boolean) =>
  until(`${model} on both planes`, async () =>
    (await Promise.all([chat('a', model), chat('b', model)])).every((r) => status(r.status)) ? true : undefined,
  );

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-planes-'));
  db = await testDatabase();
  await startMp();
  await call('CreateCustomer', { customerId: 'acme' });
  await call('CreateProject', { customerId: 'acme', projectId: 'web' });
  await addModel('echo-chat');
  await call('CreateProviderConnection', { customerId: 'acme', projectId: 'web', name: 'e', provider: 'echo' });
  await call('CreateRoute', { customerId: 'acme', projectId: 'web', model: 'echo-chat', targets: [{ connection: 'e', model: 'echo' }] });
  apiKey = String(
    (await call('CreateApiKey', { name: 'k', enterpriseContext: { customerId: 'acme', projectId: 'web' } }, 'apikey.v1.ApiKeyService'))
      .apiKey,
  );
  for (const name of ['a', 'b'] as const) {
    await call('CreateWorkspace', { customerId: 'acme', workspaceId: `edge-${name}`, projectId: 'web' });
    const created = await call('CreateServiceAccount', { customerId: 'acme', workspaceId: `edge-${name}`, apiUri: adminUrl });
    planes[name].file = join(dir, `sa-${name}.json`);
    planes[name].saId = String((created.serviceAccount as Body).id);
    writeFileSync(planes[name].file, JSON.stringify(created), { mode: 0o600 });
    await startPlane(name);
  }
}, 120_000);

afterAll(async () => {
  await Promise.all([stop(planes.a.proc), stop(planes.b.proc), stop(mp)]);
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`separate data planes (${process.env.TEST_DATABASE_URL ? 'postgres' : 'embedded store'})`, () => {
  test('both serve the configuration they pulled; the management plane lists both', async () => {
    await bothReach('echo-chat', (s) => s === 200);
    const status = (await call('GetConfigStatus', {})).dataplanes as Body[];
    const ids = status.map((s) => s.dataplaneId);
    expect(ids).toContain('edge-a');
    expect(ids).toContain('edge-b');
    expect(ids).toContain('local');
  }, 30_000);

  test('a route created, changed and deleted reaches both', async () => {
    await addModel('m2');
    await call('CreateRoute', { customerId: 'acme', projectId: 'web', model: 'm2', targets: [{ connection: 'e', model: 'echo' }] });
    await bothReach('m2', (s) => s === 200);
    await call('UpdateRoute', { customerId: 'acme', projectId: 'web', model: 'm2', enabled: false });
    await bothReach('m2', (s) => s !== 200);
    await call('DeleteRoute', { customerId: 'acme', projectId: 'web', model: 'm2' });
    await bothReach('m2', (s) => s === 404);
    const status = await until('both serving', async () => {
      const s = ((await call('GetConfigStatus', {})).dataplanes as Body[]).filter((p) => p.dataplaneId !== 'local');
      return s.every((p) => p.stage === 'serving') ? s : undefined;
    });
    for (const p of status) expect(p.appliedRevision).toBe(p.desiredRevision);
  }, 60_000);

  test('a data plane stopped, configuration changed, restarted: it converges', async () => {
    await stop(planes.b.proc);
    await addModel('m3');
    await call('CreateRoute', { customerId: 'acme', projectId: 'web', model: 'm3', targets: [{ connection: 'e', model: 'echo' }] });
    const pending = ((await call('GetConfigStatus', { dataplaneId: 'edge-b' })).dataplanes as Body[])[0];
    expect(pending?.stage).toBe('pending');
    await startPlane('b');
    await bothReach('m3', (s) => s === 200);
  }, 60_000);

  test('management plane stopped: both keep serving; records made meanwhile arrive after it returns', async () => {
    await stop(mp);
    const ids: string[] = [];
    for (const name of ['a', 'b'] as const) {
      for (let i = 0; i < 3; i++) {
        const r = await chat(name, 'echo-chat');
        expect(r.status).toBe(200);
        ids.push(r.requestId);
      }
    }
    // The records cannot be sent: they are spooled to disk (and /readyz says where they stand).
    const ready = await until('records spooled', async () => {
      const r = (await (await fetch(`http://127.0.0.1:${planes.a.port}/readyz`)).json()) as Body;
      return (r.records as Body).spooledBatches !== 0 ? r : undefined;
    });
    expect((ready.records as Body).storeDown).toBe(true);
    // A data plane restarted while the management plane is away serves its last configuration (kept on disk, keys sealed).
    await stop(planes.a.proc);
    await startPlane('a');
    expect((await chat('a', 'echo-chat')).status).toBe(200);
    await startMp();
    for (const id of ids) {
      await until(`record ${id}`, async () => {
        const found = await call('SearchRequestRecords', { customerId: 'acme', projectId: 'web', requestId: id });
        return JSON.stringify(found).includes(id) ? true : undefined;
      });
    }
  }, 120_000);

  test('a revoked service account is refused at the next pull, and /readyz says so', async () => {
    await call('RevokeServiceAccount', { id: planes.a.saId, reason: 'decommissioned' });
    const ready = await until('refusal in /readyz', async () => {
      const r = (await (await fetch(`http://127.0.0.1:${planes.a.port}/readyz`)).json()) as Body;
      return r.serviceAccount === 'refused' ? r : undefined;
    });
    expect(String(ready.refusedReason)).toContain('revoked');
    // It keeps its last configuration.
    expect((await chat('a', 'echo-chat')).status).toBe(200);
    const other = (await (await fetch(`http://127.0.0.1:${planes.b.port}/readyz`)).json()) as Body;
    expect(other.serviceAccount).toBe('ok');
  }, 30_000);
});
