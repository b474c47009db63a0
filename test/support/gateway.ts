import { type Gateway, startGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config/env.ts';
import { generateKek } from '../../src/core/secrets.ts';
import { isDatabaseUnavailable } from '../../src/core/errors.ts';
import { type TestDatabase, testDatabase } from './db.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestGateway {
  gw: Gateway;
  db: TestDatabase;
  /** `http://127.0.0.1:PORT` of the inference listener. */
  url: string;
  adminUrl: string;
  /**
   * Calls a management operation; returns status and parsed body. A write returns at commit, before
   * the embedded data plane serves it: after a 200 this waits until the served snapshot reaches the
   * newest committed revision (`settle`), so a test may infer right after configuring.
   */
  call(path: string, body: unknown, token?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Same, but throws unless 200. */
  must(path: string, body: unknown): Promise<Record<string, unknown>>;
  /** Waits until the embedded data plane serves the newest committed revision (after writes made outside `call`). */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the real gateway (both listeners, real store) on free ports. */
export const startTestGateway = async (env: Record<string, string> = {}): Promise<TestGateway> => {
  const db = await testDatabase();
  const config = loadConfig([], {
    GATEWAY_PORT: '0',
    GATEWAY_METRICS_PORT: '0',
    GATEWAY_ADMIN_PORT: '0',
    GATEWAY_DATA_DIR: 'memory://',
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_DEMO: '0',
    GATEWAY_KEK: generateKek(),
    GATEWAY_RECORD_FLUSH_INTERVAL: '50ms',
    GATEWAY_LOG_LEVEL: 'error',
    // Teardown should not wait for connections a test left open.
    GATEWAY_SHUTDOWN_GRACE: '1s',
    ...(db.url ? { DATABASE_URL: db.url } : {}),
    ...env,
  });
  const gw = await startGateway(config);
  const settle = async (): Promise<void> => {
    try {
      await gw.controller.settled();
    } catch (e) {
      // A call answered without the database (tests that stop it): there is no revision to wait for.
      if (!isDatabaseUnavailable(e)) throw e;
    }
  };
  const call = async (path: string, body: unknown, token = ADMIN_TOKEN) => {
    const res = await fetch(`${gw.adminUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status === 200) await settle();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { raw: text };
    }
    return { status: res.status, body: parsed };
  };
  return {
    gw,
    db,
    url: gw.inferenceUrl,
    adminUrl: gw.adminUrl,
    call,
    settle,
    must: async (path, body) => {
      const r = await call(path, body);
      if (r.status !== 200) throw new Error(`${path} → ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    stop: async () => {
      await gw.stop();
      await db.drop();
    },
  };
};

export const admin = (op: string) => `/admin.v1.AdminService/${op}`;
export const apikeyOp = (op: string) => `/apikey.v1.ApiKeyService/${op}`;
export const byokOp = (op: string) => `/byok.v1.ByokService/${op}`;

/**
 * For a gateway in another process: polls GetConfigStatus until the data plane `dataplaneId`
 * (default the embedded `local`) serves the newest committed revision (stage `serving`).
 */
export const waitServing = async (adminUrl: string, token: string, dataplaneId = 'local', timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${adminUrl}${admin('GetConfigStatus')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ dataplaneId }),
    });
    const body = (await res.json()) as { dataplanes?: { stage: string }[] };
    if (res.status === 200 && body.dataplanes?.[0]?.stage === 'serving') return;
    if (Date.now() > deadline) throw new Error(`data plane '${dataplaneId}' not serving after ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await Bun.sleep(20);
  }
};
