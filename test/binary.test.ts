import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinary } from '../deploy/build-binary.ts';
import { testDatabase } from './support/db.ts';
import { freePort } from './support/throwaway-pg.ts';

/**
 * The one binary (`bun run build:binary`): built here, started on an empty data directory (the
 * migrations and PGlite's WebAssembly come from inside it, the working directory is elsewhere), and
 * the demo curl it prints answered. With TEST_DATABASE_URL: `gateway migrate`, and GATEWAY_MIGRATE=0
 * refusing a database whose migrations are pending.
 */

const dir = mkdtempSync(join(tmpdir(), 'gateway-binary-'));
let built: ReturnType<typeof buildBinary> | undefined;
let buildError = '';
try {
  built = buildBinary({ outfile: join(dir, 'gateway') });
} catch (e) {
  buildError = e instanceof Error ? e.message : String(e);
}
const procs: Bun.Subprocess[] = [];
afterAll(async () => {
  for (const p of procs) {
    p.kill('SIGKILL');
    await p.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});
if (!built) process.stderr.write(`binary.test.ts: skipped, the binary could not be built here: ${buildError}\n`);

const start = async (env: Record<string, string>, args: string[] = ['serve']) => {
  const port = await freePort();
  const adminPort = await freePort();
  const proc = Bun.spawn([built?.binary ?? '', ...args], {
    cwd: dir, // not the checkout: nothing may be read from it
    env: {
      PATH: process.env.PATH ?? '',
      GATEWAY_PORT: String(port),
      GATEWAY_ADMIN_PORT: String(adminPort),
      GATEWAY_LOG_LEVEL: 'warn',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  procs.push(proc);
  return { proc, port, adminPort };
};

const healthy = async (port: number, proc: Bun.Subprocess, limitMs: number): Promise<number> => {
  const t0 = performance.now();
  while (performance.now() - t0 < limitMs) {
    if (proc.exitCode !== null) throw new Error(`the binary exited with ${proc.exitCode}`);
    const r = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (r?.status === 200) return performance.now() - t0;
    await Bun.sleep(20);
  }
  throw new Error('no /healthz 200 in time');
};

describe.skipIf(!built)('the compiled gateway', () => {
  test('starts on an empty data dir, answers /healthz 200, and the demo curl it prints works', async () => {
    const t0 = performance.now();
    const { proc, port } = await start({ GATEWAY_DATA_DIR: join(dir, 'data') });
    const coldMs = await healthy(port, proc, 45_000);
    const stdout = proc.stdout instanceof ReadableStream ? proc.stdout.getReader() : undefined;
    let text = '';
    while (stdout && !text.includes('ready in')) {
      const { value, done } = await stdout.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const curl = /curl -s (\S+) -H 'Authorization: Bearer (\S+)' -H 'Content-Type: application\/json' -d '(.+)'/.exec(text);
    expect(curl).not.toBeNull();
    const [, url = '', key = '', body = ''] = curl ?? [];
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(json.choices[0]?.message.content).toBe('Hello, gateway!');
    process.stderr.write(
      `binary.test.ts: ${((built?.bytes ?? 0) / 1024 / 1024).toFixed(1)} MiB, built in ${built?.ms} ms; cold start to /healthz 200 on an empty data dir: ${Math.round(coldMs)} ms (spawn to 200: ${Math.round(performance.now() - t0)} ms)\n`,
    );
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    // A second start on the now-initialised directory.
    const again = await start({ GATEWAY_DATA_DIR: join(dir, 'data') });
    const warmMs = await healthy(again.port, again.proc, 20_000);
    process.stderr.write(`binary.test.ts: start to /healthz 200 on an existing data dir: ${Math.round(warmMs)} ms\n`);
    again.proc.kill('SIGTERM');
    expect(await again.proc.exited).toBe(0);
  }, 60_000);

  test.skipIf(!process.env.TEST_DATABASE_URL)(
    'PostgreSQL: GATEWAY_MIGRATE=0 refuses a pending migration; `gateway migrate` applies them; then it starts',
    async () => {
      const db = await testDatabase();
      try {
        const env = {
          DATABASE_URL: db.url ?? '',
          GATEWAY_KEK: Buffer.alloc(32, 7).toString('base64'),
          GATEWAY_ADMIN_TOKEN: 'gwadm-test-token-binary',
          GATEWAY_MIGRATE: '0',
        };
        const refused = await start(env);
        expect(await refused.proc.exited).toBe(2);
        expect(await new Response(refused.proc.stderr).text()).toContain('GATEWAY_MIGRATE=0: run `gateway migrate`');
        const migrate = await start(env, ['migrate']);
        expect(await migrate.proc.exited).toBe(0);
        expect(await new Response(migrate.proc.stdout).text()).toContain('gateway: migrations applied (postgres)');
        const served = await start(env);
        await healthy(served.adminPort, served.proc, 20_000);
        served.proc.kill('SIGTERM');
        expect(await served.proc.exited).toBe(0);
      } finally {
        await db.drop();
      }
    },
    60_000,
  );
});
