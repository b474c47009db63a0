import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKek } from '../src/core/secrets.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { requestRecords } from '../src/store/schema/index.ts';
import { testDatabase, type TestDatabase } from './support/db.ts';
import { waitServing } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';

/**
 * Contract §1 "Shutdown", on the real process (`bun src/main.ts serve`): SIGTERM stops both
 * listeners accepting, lets streams in flight finish, writes their records and exits 0; a stream
 * still open at GATEWAY_SHUTDOWN_GRACE gets the format's error event and is recorded as
 * `gateway_shutdown`, not `client_closed`. The store is the real one: a PGlite directory reopened
 * after exit, or PostgreSQL when TEST_DATABASE_URL is set.
 */

const ROOT = join(import.meta.dir, '..');
const ADMIN = 'shutdown-admin-token-0123456789';
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const freePort = (): number => {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port as number;
  s.stop(true);
  return port;
};

interface Running {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  url: string;
  port: number;
  openStore(): Promise<Store>;
}

const spawnGateway = async (extraEnv: Record<string, string>): Promise<Running> => {
  const db: TestDatabase = await testDatabase();
  cleanups.push(() => db.drop());
  const dir = mkdtempSync(join(tmpdir(), 'gw-shutdown-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const port = freePort();
  const adminPort = freePort();
  const env: Record<string, string> = {
    GATEWAY_PORT: String(port),
    GATEWAY_ADMIN_PORT: String(adminPort),
    GATEWAY_ADMIN_TOKEN: ADMIN,
    GATEWAY_DEMO: '0',
    GATEWAY_LOG_LEVEL: 'error',
    GATEWAY_RECORD_FLUSH_INTERVAL: '5s', // records still queued at SIGTERM must be written by the drain
    ...(db.url ? { DATABASE_URL: db.url, GATEWAY_KEK: generateKek() } : { GATEWAY_DATA_DIR: dir }),
    ...extraEnv,
  };
  const proc = Bun.spawn(['bun', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  cleanups.push(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  const reader = proc.stdout.getReader();
  let out = '';
  const deadline = Date.now() + 60_000;
  while (!out.includes('ready in') && Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  if (!out.includes('ready in')) throw new Error(`gateway did not start: ${out} ${await new Response(proc.stderr).text()}`);
  return {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    openStore: () => (db.url ? openStore({ driver: 'postgres', url: db.url }) : openStore({ driver: 'pglite', dataDir: dir })),
  };
};

/** One customer, model `gpt-mini` routed to the mock OpenAI upstream, and an API key. */
const provision = async (adminUrl: string, upstream: MockUpstream): Promise<string> => {
  const op = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${adminUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const a = (name: string) => `/admin.v1.AdminService/${name}`;
  await op(a('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  const model = (await op(a('CreateModel'), {
    model: 'gpt-mini',
    provider: 'openai',
    mode: 'chat',
    capabilities: ['chat'],
    contextWindow: 128000,
    maxOutputTokens: 16384,
  })) as { model: { id: string } };
  await op(a('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: model.model.id });
  await op(a('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: 'mock-openai',
    provider: 'openai',
    baseUrl: `${upstream.url}/v1`,
    apiKey: 'sk-upstream-secret',
  });
  await op(a('CreateRoute'), {
    customerId: 'acme',
    projectId: 'default',
    model: 'gpt-mini',
    targets: [{ connection: 'mock-openai', model: 'gpt-4o-mini' }],
  });
  const key = (await op('/apikey.v1.ApiKeyService/CreateApiKey', {
    name: 't',
    userId: 'u1',
    enterpriseContext: { customerId: 'acme', projectId: 'default' },
  })) as { apiKey: string };
  // Writes return at commit: wait until the gateway's embedded data plane serves them.
  await waitServing(adminUrl, ADMIN);
  return key.apiKey;
};

/** Opens a stream and returns its whole text once it ends (or whatever arrived when it broke). */
const openStream = async (
  url: string,
  key: string,
  clientId: string,
): Promise<{ status: number; text: string; requestId: string | null }> => {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-client-request-id': clientId },
    body: JSON.stringify({
      model: 'gpt-mini',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten eleven twelve' }],
    }),
  });
  let text = '';
  try {
    text = await res.text();
  } catch {
    // Cut connection: keep what arrived.
  }
  return { status: res.status, text, requestId: res.headers.get('x-request-id') };
};

const refused = async (url: string): Promise<boolean> => {
  try {
    await fetch(`${url}/healthz`);
    return false;
  } catch {
    return true;
  }
};

describe('shutdown (contract §1)', () => {
  test('SIGTERM drains 50 open streams: all complete, new connections refused, records written, exit 0', async () => {
    const up = startMockUpstream('openai');
    cleanups.push(() => up.stop());
    const adminPort = String(freePort());
    const gw = await spawnGateway({ GATEWAY_ADMIN_PORT: adminPort, GATEWAY_SHUTDOWN_GRACE: '30s' });
    const key = await provision(`http://127.0.0.1:${adminPort}`, up);
    // 14 chunks, 150 ms apart: each stream lasts about 2 s.
    up.script(() => ({
      text: 'one two three four five six seven eight nine ten eleven twelve',
      usage: { input: 5, output: 12 },
      chunkDelayMs: 150,
    }));
    const streams = Array.from({ length: 50 }, (_, i) => openStream(gw.url, key, `drain-${i}`));
    await Bun.sleep(600);
    expect(up.requests.length).toBe(50);
    const t0 = Date.now();
    gw.proc.kill('SIGTERM');
    await Bun.sleep(150);
    expect(await refused(gw.url)).toBe(true);
    const results = await Promise.all(streams);
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.text).toContain('data: [DONE]');
      expect(r.text).toContain('twelve');
      expect(r.text).not.toContain('"error"');
    }
    expect(await gw.proc.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(20_000);
    const store = await gw.openStore();
    try {
      const rows = await store.db.select().from(requestRecords);
      const drained = rows.filter((r) => r.clientRequestId?.startsWith('drain-'));
      expect(drained.length).toBe(50);
      for (const r of drained) {
        expect(r.errorCode).toBeNull();
        expect(r.stream).toBe(true);
        expect(r.outputTokens).toBe(12);
      }
    } finally {
      await store.close();
    }
  }, 120_000);

  test('a stream longer than GATEWAY_SHUTDOWN_GRACE gets the error event and is recorded as gateway_shutdown', async () => {
    const up = startMockUpstream('openai');
    cleanups.push(() => up.stop());
    const adminPort = String(freePort());
    const gw = await spawnGateway({ GATEWAY_ADMIN_PORT: adminPort, GATEWAY_SHUTDOWN_GRACE: '1s' });
    const key = await provision(`http://127.0.0.1:${adminPort}`, up);
    // About 14 chunks 1 s apart: far longer than the grace period.
    up.script(() => ({ text: 'one two three four five six seven eight nine ten eleven twelve', chunkDelayMs: 1000 }));
    const stream = openStream(gw.url, key, 'cut-1');
    await Bun.sleep(1500);
    const t0 = Date.now();
    gw.proc.kill('SIGTERM');
    const r = await stream;
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('[DONE]');
    const last = r.text.trim().split('\n\n').at(-1) ?? '';
    expect(last.startsWith('data: ')).toBe(true);
    const event = JSON.parse(last.slice(6)) as { error?: { code?: string; type?: string } };
    expect(event.error?.code).toBe('gateway_shutdown');
    expect(await gw.proc.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await Bun.sleep(200);
    expect(up.cancelled).toBe(1);
    const store = await gw.openStore();
    try {
      const rows = await store.db.select().from(requestRecords);
      const row = rows.find((x) => x.clientRequestId === 'cut-1');
      expect(row?.errorCode).toBe('gateway_shutdown');
      expect(row?.requestId).toBe(r.requestId ?? '');
    } finally {
      await store.close();
    }
  }, 120_000);
});
