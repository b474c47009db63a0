/**
 * Starts the gateway the way users start it (`bun src/main.ts serve`, embedded PGlite store) and
 * provisions a realistic configuration through the management API: 10 customers, 100 routes,
 * 1,000 API keys.
 *
 * Provisioning 1,000 keys one by one through the API takes ~20-30 s on a 2-core machine. A write
 * returns at commit, before the data plane serves it: provisioning ends by waiting until the
 * embedded data plane serves the newest revision (`waitServing`). So the provisioned store is kept as a template in
 * $TMPDIR (keyed by the migrations and this file); `--quick` reuses it, a full run provisions
 * afresh (and reports how long that took) unless told otherwise. Either way the gateway under test
 * is a fresh `serve` process on its own copy of a store that was provisioned through the API.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { mockPrefix } from '../mock-upstream.ts';
import { pinned, type Service, spawnService } from './proc.ts';
import { provisionResilient, RESILIENT_PROJECT } from './resilient.ts';

const ROOT = resolve(import.meta.dir, '..', '..');

export const CUSTOMERS = 10;
export const ROUTES_PER_CUSTOMER = 10;
export const KEYS_PER_CUSTOMER = 100;
/** The customer whose keys and routes the scenarios use. */
export const BENCH_CUSTOMER = 'bench-00';
/** Public models of the bench customer, by scenario. */
export const MODELS = {
  /** → mock OpenAI Chat Completions. */
  openai: 'gpt-bench',
  /** → mock Anthropic Messages. */
  anthropic: 'claude-bench',
  /** primary answers 503 at once, backup (priority 1) is the mock OpenAI. */
  fallback: 'gpt-fallback',
  /** → mock OpenAI with 50 ms to first byte and paced events. */
  slow: 'gpt-slow',
  /** → mock OpenAI; its route is rewritten continuously in the churn scenario. */
  churn: 'gpt-churn',
  /** Project `resilient` (circuit breakers on, the default): primary answers 503 at once, backup the mock OpenAI. */
  failingPrimary: 'gpt-failing-primary',
} as const;

export const SLOW_UPSTREAM = { latencyMs: 50, paceMs: 20 };

/** What it takes to start the same gateway again on the same store. */
export interface GatewaySetup {
  dataDir: string;
  kek: string;
  adminToken: string;
}

export interface LaunchedGateway {
  service: Service;
  url: string;
  adminUrl: string;
  startMs: number;
  call(path: string, body: unknown): Promise<Record<string, unknown>>;
  /** Resolves once the embedded data plane serves every write made so far. */
  converged(): Promise<void>;
}

/** `bun src/main.ts serve` on the setup's data directory; resolves once it printed "ready". */
export const launchGateway = async (
  setup: GatewaySetup,
  opts: {
    cpu: string | undefined;
    env?: Record<string, string>;
    bunArgs?: string[] /** Another checkout to run (bench/ab.ts). */;
    root?: string;
  },
): Promise<LaunchedGateway> => {
  const t0 = performance.now();
  const root = opts.root ?? ROOT;
  const { service } = await spawnService(
    'gateway',
    pinned(opts.cpu, ['bun', ...(opts.bunArgs ?? []), join(root, 'src/main.ts'), 'serve']),
    {
      cwd: root,
      env: {
        GATEWAY_DATA_DIR: setup.dataDir,
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_PORT: '0',
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_ADMIN_TOKEN: setup.adminToken,
        GATEWAY_KEK: setup.kek,
        GATEWAY_DEMO: '0',
        GATEWAY_LOG_LEVEL: 'warn',
        DATABASE_URL: undefined,
        ...opts.env,
      },
      ready: /gateway: ready in/,
      timeoutMs: 90_000,
    },
  );
  const startMs = performance.now() - t0;
  const find = (re: RegExp) => {
    for (const l of service.lines) {
      const m = re.exec(l);
      if (m) return m[1] as string;
    }
    throw new Error(`gateway did not print ${re}:\n${service.lines.join('\n')}`);
  };
  const url = find(/inference API on (http:\/\/\S+)\/v1/);
  const adminUrl = find(/management API on (http:\/\/\S+?) /);
  const call = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${adminUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.adminToken}` },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${path} → ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  return { service, url, adminUrl, startMs, call, converged: () => waitServing(adminUrl, setup.adminToken) };
};

/**
 * Polls GetConfigStatus until the data plane (default the embedded `local`) serves the newest
 * committed revision: management writes return at commit, before propagation.
 */
export const waitServing = async (adminUrl: string, adminToken: string, dataplaneId = 'local', timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${adminUrl}/admin.v1.AdminService/GetConfigStatus`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ dataplaneId }),
    });
    const body = (await res.json()) as { dataplanes?: { stage: string }[] };
    if (res.status === 200 && body.dataplanes?.[0]?.stage === 'serving') return;
    if (Date.now() > deadline) throw new Error(`data plane '${dataplaneId}' not serving after ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await Bun.sleep(20);
  }
};

const PRICES = { inputPricePerMillion: 0.15, outputPricePerMillion: 0.6, cachedPricePerMillion: 0.075 };

const pool = async <T>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> => {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
};

const customerIds = (): string[] => Array.from({ length: CUSTOMERS }, (_, i) => `bench-${String(i).padStart(2, '0')}`);

/** Every connection and the base URL it gets for a mock at `mock`. */
const connectionsOf = (customerId: string, mock: string): { name: string; provider: string; baseUrl: string; apiKey: string }[] => {
  const out = [{ name: 'mock-openai', provider: 'openai', baseUrl: `${mock}/v1`, apiKey: 'sk-upstream-bench-openai' }];
  if (customerId === BENCH_CUSTOMER) {
    out.push(
      { name: 'mock-anthropic', provider: 'anthropic', baseUrl: mock, apiKey: 'sk-ant-upstream-bench' },
      { name: 'mock-failing', provider: 'openai', baseUrl: `${mock}${mockPrefix({ fail: 503 })}/v1`, apiKey: 'sk-upstream-bench-openai' },
      { name: 'mock-slow', provider: 'openai', baseUrl: `${mock}${mockPrefix(SLOW_UPSTREAM)}/v1`, apiKey: 'sk-upstream-bench-openai' },
    );
  }
  return out;
};

export interface ProvisionTimings {
  configMs: number;
  keysMs: number;
}

/** The configuration, through the management API of a running gateway. Returns the bench customer's keys. */
export const provision = async (
  gw: LaunchedGateway,
  mock: string,
  keysPerCustomer = KEYS_PER_CUSTOMER,
): Promise<{ keys: string[]; resilientKey: string; timings: ProvisionTimings }> => {
  const admin = (op: string, body: unknown) => gw.call(`/admin.v1.AdminService/${op}`, body);
  const t0 = performance.now();
  const fillers = Array.from({ length: ROUTES_PER_CUSTOMER }, (_, i) => `filler-${String(i).padStart(2, '0')}`);
  const catalog: [string, string][] = [
    [MODELS.openai, 'openai'],
    [MODELS.anthropic, 'anthropic'],
    [MODELS.fallback, 'openai'],
    [MODELS.slow, 'openai'],
    [MODELS.churn, 'openai'],
    [MODELS.failingPrimary, 'openai'],
    ...fillers.map((f): [string, string] => [f, 'openai']),
  ];
  const modelIds = new Map<string, string>();
  for (const [model, provider] of catalog) {
    const r = (await admin('CreateModel', {
      model,
      provider,
      mode: 'chat',
      capabilities: ['chat', 'tools'],
      contextWindow: 128000,
      maxOutputTokens: 16384,
      ...PRICES,
    })) as {
      model: { id: string };
    };
    modelIds.set(model, r.model.id);
  }
  const customers = customerIds();
  let resilientKey = '';
  await pool(customers, 4, async (customerId) => {
    await admin('CreateCustomer', { customerId, name: `Bench ${customerId}` });
    const base = { customerId, projectId: 'default' };
    for (const c of connectionsOf(customerId, mock)) await admin('CreateProviderConnection', { ...base, ...c });
    const routes: { model: string; targets: { connection: string; model: string; priority: number; weight: number }[] }[] = [];
    if (customerId === BENCH_CUSTOMER) {
      const one = (connection: string, model: string) => [{ connection, model, priority: 0, weight: 1 }];
      routes.push(
        { model: MODELS.openai, targets: one('mock-openai', 'gpt-4o-mini') },
        { model: MODELS.anthropic, targets: one('mock-anthropic', 'claude-haiku-4-5') },
        {
          model: MODELS.fallback,
          targets: [
            { connection: 'mock-failing', model: 'gpt-4o-mini', priority: 0, weight: 1 },
            { connection: 'mock-openai', model: 'gpt-4o-mini', priority: 1, weight: 1 },
          ],
        },
        { model: MODELS.slow, targets: one('mock-slow', 'gpt-4o-mini') },
        { model: MODELS.churn, targets: one('mock-openai', 'gpt-4o-mini') },
      );
    }
    for (const f of fillers) {
      if (routes.length >= ROUTES_PER_CUSTOMER) break;
      routes.push({ model: f, targets: [{ connection: 'mock-openai', model: `${f}-upstream`, priority: 0, weight: 1 }] });
    }
    for (const r of routes) {
      await admin('AddProjectModel', { ...base, modelId: modelIds.get(r.model) });
      await admin('CreateRoute', { ...base, ...r });
    }
    if (customerId === BENCH_CUSTOMER)
      resilientKey = await provisionResilient(
        (path, body) => gw.call(path, body),
        customerId,
        connectionsOf(customerId, mock),
        modelIds.get(MODELS.failingPrimary),
        MODELS.failingPrimary,
      );
  });
  const configMs = performance.now() - t0;
  const keys: string[] = [];
  const jobs = customers.flatMap((c) => Array.from({ length: keysPerCustomer }, (_, i) => ({ c, i })));
  await pool(jobs, 16, async ({ c, i }) => {
    const r = (await gw.call('/apikey.v1.ApiKeyService/CreateApiKey', {
      name: `key-${i}`,
      userId: `user-${i % 7}`,
      enterpriseContext: { customerId: c, projectId: 'default' },
    })) as { apiKey: string };
    if (c === BENCH_CUSTOMER) keys.push(r.apiKey);
  });
  await gw.converged();
  return { keys, resilientKey, timings: { configMs, keysMs: performance.now() - t0 - configMs } };
};

/** Points every provider connection at the mock now running at `mock` (a reused store). */
export const repoint = async (gw: LaunchedGateway, mock: string): Promise<void> => {
  for (const customerId of customerIds()) {
    const projects = customerId === BENCH_CUSTOMER ? ['default', RESILIENT_PROJECT] : ['default'];
    for (const projectId of projects)
      for (const c of connectionsOf(customerId, mock))
        await gw.call('/admin.v1.AdminService/UpdateProviderConnection', { customerId, projectId, name: c.name, baseUrl: c.baseUrl });
  }
  await gw.converged();
};

// ---- an external PostgreSQL store (optional variant) ----------------------------------------------

export interface PostgresStore {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database on the server at `adminUrl` (dropped afterwards): the gateway's production shape. */
export const createPostgresDatabase = async (adminUrl: string): Promise<PostgresStore> => {
  const postgres = (await import('postgres')).default;
  const name = `gw_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
};

// ---- the provisioned store as a template ----------------------------------------------------------

interface TemplateMeta {
  kek: string;
  adminToken: string;
  keys: string[];
  resilientKey: string;
  createdAt: string;
  timings: ProvisionTimings & { firstStartMs: number };
}

const templateKey = (): string => {
  const parts = [
    readFileSync(join(ROOT, 'drizzle', 'meta', '_journal.json'), 'utf8'),
    readFileSync(import.meta.path, 'utf8'),
    String(KEYS_PER_CUSTOMER),
  ];
  return Bun.hash.xxHash64(parts.join('\n')).toString(16).padStart(16, '0');
};

const templateDir = (): string => join(tmpdir(), `ai-gateway-bench-store-${templateKey()}`);

export interface PreparedStore {
  setup: GatewaySetup;
  keys: string[];
  /** A key of the `resilient` project (failing-primary). */
  resilientKey: string;
  /** 'fresh': provisioned in this run (timings measured); 'template': copied from an earlier run's. */
  source: 'fresh' | 'template';
  timings: (ProvisionTimings & { firstStartMs: number }) | undefined;
  templateCreatedAt: string;
}

/**
 * A provisioned store in a new data directory: a copy of the template when one exists and
 * `fresh` is false, else provisioned now through a gateway started on an empty data directory
 * (which is then stopped; the template is refreshed from it).
 */
/** Data directories made for gateways under test (copies of the template: 50–300 MB each). */
const scratchDirs: string[] = [];
/** A new data directory for a gateway under test, removed by removeScratchDirs. */
export const scratchDir = (prefix = 'bench-gw-'): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  scratchDirs.push(d);
  return d;
};
/** Removes the data directories of this run (after its gateways stopped). */
export const removeScratchDirs = (): void => {
  for (const d of scratchDirs.splice(0)) rmSync(d, { recursive: true, force: true });
};

export const prepareStore = async (opts: {
  mock: string;
  cpu: string | undefined;
  fresh: boolean;
  log: (s: string) => void;
}): Promise<PreparedStore> => {
  const tdir = templateDir();
  const metaFile = `${tdir}.json`;
  const dataDir = scratchDir();
  if (!opts.fresh && existsSync(metaFile) && existsSync(tdir)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as TemplateMeta;
    rmSync(dataDir, { recursive: true, force: true });
    cpSync(tdir, dataDir, { recursive: true });
    opts.log(`store: copied the provisioned template from ${tdir} (created ${meta.createdAt}; --fresh provisions anew)`);
    return {
      setup: { dataDir, kek: meta.kek, adminToken: meta.adminToken },
      keys: meta.keys,
      resilientKey: meta.resilientKey,
      source: 'template',
      timings: meta.timings,
      templateCreatedAt: meta.createdAt,
    };
  }
  const setup: GatewaySetup = {
    dataDir,
    kek: randomBytes(32).toString('base64'),
    adminToken: `bench-admin-${randomBytes(12).toString('hex')}`,
  };
  opts.log(
    'store: first start on an empty data directory, then provisioning 10 customers, 100 routes, 1,000 API keys through the management API…',
  );
  const gw = await launchGateway(setup, { cpu: opts.cpu });
  const { keys, resilientKey, timings } = await provision(gw, opts.mock);
  await gw.service.stop();
  const all = { ...timings, firstStartMs: gw.startMs };
  opts.log(
    `store: first start ${(gw.startMs / 1000).toFixed(1)} s, configuration ${(timings.configMs / 1000).toFixed(1)} s, 1,000 keys ${(timings.keysMs / 1000).toFixed(1)} s`,
  );
  rmSync(tdir, { recursive: true, force: true });
  cpSync(dataDir, tdir, { recursive: true });
  const meta: TemplateMeta = {
    kek: setup.kek,
    adminToken: setup.adminToken,
    keys,
    resilientKey,
    createdAt: new Date().toISOString(),
    timings: all,
  };
  writeFileSync(metaFile, JSON.stringify(meta));
  chmodSync(metaFile, 0o600);
  return { setup, keys, resilientKey, source: 'fresh', timings: all, templateCreatedAt: meta.createdAt };
};
