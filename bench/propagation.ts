/**
 * Save → serving latency: the time from a management write's response (CreateApiKey) to the first
 * inference request that sees the change (the new key answered 200 instead of 401), on the embedded
 * data plane of the management process and on a separate `serve --role data` process, measured for
 * the same write at once.
 *
 *   bun run bench:propagation [-- --samples=40] [--poll=1s] [--pg=postgres://…] [--probe-ms=2] [--modes=notify,polling]
 *
 * Two modes, each on fresh processes and a fresh store (PGlite in a temp directory, or a new
 * database on the PostgreSQL server named by --pg / BENCH_PG_URL):
 * - notify: WORKER_LISTEN on (NOTIFY wakes the propagation worker; the data plane's Pull is held
 *   open until its revision moves);
 * - polling: WORKER_LISTEN=0 on both processes, WORKER_POLL_INTERVAL=--poll (default 1s): the
 *   latency is then the wait for the next poll, uniform over the interval.
 * Inference goes to the built-in `echo` provider (no upstream). Probes run every --probe-ms (2 ms).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateKek } from '../src/core/secrets.ts';
import { createPostgresDatabase, launchGateway, type LaunchedGateway } from './lib/gateway.ts';
import { percentiles } from './lib/probe.ts';
import { type Service, spawnService } from './lib/proc.ts';

const ROOT = resolve(import.meta.dir, '..');
const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const SAMPLES = Number(arg('samples') ?? 40);
const POLL = arg('poll') ?? '1s';
const PG = arg('pg') ?? process.env.BENCH_PG_URL;
/** Pause between probes of the new key (each probe is one inference request per data plane). */
const PROBE_MS = Number(arg('probe-ms') ?? 2);
const MODES = (arg('modes') ?? 'notify,polling').split(',').filter((m): m is 'notify' | 'polling' => m === 'notify' || m === 'polling');
const C = { customerId: 'bench', projectId: 'default' };

type Body = Record<string, unknown>;

const infer = async (url: string, key: string): Promise<number> => {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{"model":"echo-chat","messages":[{"role":"user","content":"hi"}]}',
  });
  await res.arrayBuffer();
  return res.status;
};

/** Probes until the key is served; returns ms from `t0` to that response. */
const servedAfter = async (url: string, key: string, t0: number, timeoutMs: number): Promise<number> => {
  for (;;) {
    if ((await infer(url, key)) === 200) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`not served after ${timeoutMs} ms at ${url}`);
    await Bun.sleep(PROBE_MS);
  }
};

const until = async (what: string, fn: () => Promise<boolean>, ms = 60_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
};

interface ModeResult {
  mode: string;
  embedded: number[];
  separate: number[];
  writeMs: number[];
}

const runMode = async (mode: 'notify' | 'polling'): Promise<ModeResult> => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-prop-'));
  const pg = PG ? await createPostgresDatabase(PG) : undefined;
  const setup = { dataDir: join(dir, 'mp'), kek: generateKek(), adminToken: `bench-admin-${Math.random().toString(36).slice(2)}` };
  const workerEnv =
    mode === 'notify' ? { WORKER_LISTEN: '1', WORKER_POLL_INTERVAL: '10s' } : { WORKER_LISTEN: '0', WORKER_POLL_INTERVAL: POLL };
  let mp: LaunchedGateway | undefined;
  let dp: Service | undefined;
  try {
    mp = await launchGateway(setup, { cpu: undefined, env: { ...workerEnv, ...(pg ? { DATABASE_URL: pg.url } : {}) } });
    const call = mp.call;
    await call('/admin.v1.AdminService/CreateCustomer', { customerId: C.customerId, name: 'Bench' });
    const model = (await call('/admin.v1.AdminService/CreateModel', { model: 'echo-chat', provider: 'echo' })) as { model: { id: string } };
    await call('/admin.v1.AdminService/AddProjectModel', { ...C, modelId: model.model.id });
    await call('/admin.v1.AdminService/CreateProviderConnection', { ...C, name: 'e', provider: 'echo' });
    await call('/admin.v1.AdminService/CreateRoute', { ...C, model: 'echo-chat', targets: [{ connection: 'e', model: 'echo' }] });
    await call('/admin.v1.AdminService/CreateWorkspace', { customerId: C.customerId, workspaceId: 'edge' });
    const sa = await call('/admin.v1.AdminService/CreateServiceAccount', {
      customerId: C.customerId,
      workspaceId: 'edge',
      apiUri: mp.adminUrl,
    });
    const file = join(dir, 'sa.json');
    writeFileSync(file, JSON.stringify(sa), { mode: 0o600 });
    const { service, match } = await spawnService(
      'dataplane',
      ['bun', join(ROOT, 'src/main.ts'), 'serve', '--role', 'data', '--service-account', file],
      {
        cwd: ROOT,
        env: {
          GATEWAY_PORT: '0',
          GATEWAY_HOST: '127.0.0.1',
          GATEWAY_DATA_DIR: join(dir, 'dp'),
          GATEWAY_LOG_LEVEL: 'warn',
          DATABASE_URL: undefined,
          ...workerEnv,
        },
        ready: /inference API on (http:\/\/\S+)\/v1/,
        timeoutMs: 60_000,
      },
    );
    dp = service;
    const dpUrl = match[1] as string;
    const first = (await call('/apikey.v1.ApiKeyService/CreateApiKey', { name: 'warm', enterpriseContext: C })) as { apiKey: string };
    await until(
      'both planes serve',
      async () => (await infer(mp?.url as string, first.apiKey)) === 200 && (await infer(dpUrl, first.apiKey)) === 200,
    );

    const out: ModeResult = { mode, embedded: [], separate: [], writeMs: [] };
    for (let i = 0; i < SAMPLES; i++) {
      // A random phase against the poll timers.
      await Bun.sleep(50 + Math.random() * 150);
      const w0 = performance.now();
      const k = (await call('/apikey.v1.ApiKeyService/CreateApiKey', { name: `k${i}`, enterpriseContext: C })) as Body;
      const t0 = performance.now();
      out.writeMs.push(t0 - w0);
      const key = String(k.apiKey);
      const [e, s] = await Promise.all([servedAfter(mp.url, key, t0, 30_000), servedAfter(dpUrl, key, t0, 30_000)]);
      out.embedded.push(e);
      out.separate.push(s);
    }
    return out;
  } finally {
    await dp?.stop();
    await mp?.service.stop();
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
};

const fmt = (v: number): string => (v < 10 ? v.toFixed(1) : Math.round(v).toString());
const row = (mode: string, plane: string, values: number[]): string => {
  const p = percentiles(values);
  return `| ${mode} | ${plane} | ${values.length} | ${fmt(p.p50)} | ${fmt(p.p99)} | ${fmt(Math.max(...values))} |`;
};

console.log(
  `save → serving latency, ${SAMPLES} writes per mode, store: ${PG ? 'PostgreSQL' : 'PGlite'}, polling interval in polling mode: ${POLL}, probe every ${PROBE_MS} ms`,
);
const results: ModeResult[] = [];
for (const mode of MODES) {
  console.log(`running ${mode}…`);
  results.push(await runMode(mode));
}
console.log('\n| mode | data plane | writes | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|');
for (const r of results) {
  console.log(row(r.mode, 'embedded', r.embedded));
  console.log(row(r.mode, 'separate (--role data)', r.separate));
}
for (const r of results)
  console.log(
    `${r.mode}: the write itself (CreateApiKey response time) p50 ${fmt(percentiles(r.writeMs).p50)} ms, p99 ${fmt(percentiles(r.writeMs).p99)} ms`,
  );
