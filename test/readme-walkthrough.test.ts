import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockUpstream, type MockUpstream } from './support/mock-upstreams.ts';

/**
 * The README's configuration walkthrough, run as a reader runs it: every fenced `sh` block from
 * "Configure a provider, a route and a key" through "Roles", in order, in one bash, against a
 * fresh gateway started as the quick start starts it (`bun src/main.ts serve`). Only the ports
 * (the README's 8080/8081/8090 become free ones), the path of src/main.ts and the upstream (the
 * walkthrough's `$OPENAI_BASE_URL`, a mock) differ.
 */

const ROOT = join(import.meta.dir, '..');
const TOKEN = 'readme-admin-token-0123456789';

const freePort = (): number => {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port as number;
  s.stop(true);
  return port;
};

/** The fenced sh blocks between two headings of the README, in order. */
export const walkthroughBlocks = (readme: string): string[] => {
  const from = readme.indexOf('## Configure a provider, a route and a key');
  const to = readme.indexOf('## Architecture');
  if (from < 0 || to < from) throw new Error('README: the configuration walkthrough headings moved');
  return [...readme.slice(from, to).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
};

let dir = '';
let upstream: MockUpstream;
let gateway: Bun.Subprocess<'ignore', 'pipe', 'pipe'> | undefined;
const ports = { inference: 0, admin: 0, edge: 0 };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-readme-'));
  upstream = startMockUpstream('openai');
  ports.inference = freePort();
  ports.admin = freePort();
  ports.edge = freePort();
  gateway = Bun.spawn(['bun', join(ROOT, 'src/main.ts'), 'serve'], {
    cwd: dir,
    env: {
      ...process.env,
      GATEWAY_PORT: String(ports.inference),
      GATEWAY_ADMIN_PORT: String(ports.admin),
      GATEWAY_METRICS_PORT: '0',
      GATEWAY_DATA_DIR: join(dir, 'data'),
      GATEWAY_ADMIN_TOKEN: TOKEN,
      GATEWAY_DEMO: '0',
      GATEWAY_LOG_LEVEL: 'error',
      // The mock upstream listens on loopback.
      GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${ports.admin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await Bun.sleep(200);
  }
  throw new Error('the gateway did not start');
}, 90_000);

afterAll(async () => {
  gateway?.kill('SIGTERM');
  await gateway?.exited;
  upstream?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('README walkthrough', () => {
  test('the blocks are found, define $ADMIN and $TOKEN first, and use no placeholder', () => {
    const blocks = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const script = blocks.join('\n');
    expect(script.indexOf('export ADMIN=')).toBe(0);
    expect(script.indexOf('export ADMIN=')).toBeLessThan(script.indexOf('$ADMIN'));
    expect(script.indexOf('export TOKEN=')).toBeLessThan(script.indexOf('$TOKEN'));
    expect(script).not.toMatch(/<[a-zA-Z. ]+>/);
  });

  test('runs in order against a fresh gateway: configured, served, recorded; the separate data plane serves the key', async () => {
    const blocks = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const script = blocks
      .join('\n')
      .replaceAll('127.0.0.1:8081', `127.0.0.1:${ports.admin}`)
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${ports.inference}`)
      .replaceAll('127.0.0.1:8090', `127.0.0.1:${ports.edge}`)
      .replaceAll('GATEWAY_PORT=8090', `GATEWAY_PORT=${ports.edge}`)
      .replaceAll('bun src/main.ts', `bun ${join(ROOT, 'src/main.ts')}`);
    // The harness: stop what the walkthrough started in the background, whatever happens.
    const harness = `trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n${script}`;
    const run = Bun.spawn(['bash', '-c', harness], {
      cwd: dir,
      env: {
        ...process.env,
        GATEWAY_ADMIN_TOKEN: TOKEN,
        OPENAI_BASE_URL: `${upstream.url}/v1`,
        OPENAI_API_KEY: 'sk-readme-upstream-key',
        GATEWAY_LOG_LEVEL: 'error',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const timer = setTimeout(() => run.kill(), 120_000);
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    clearTimeout(timer);
    expect({
      code,
      err: err
        .split('\n')
        .filter((l) => l && !l.startsWith('gateway:'))
        .join('\n'),
    }).toEqual({ code: 0, err: '' });
    const answers = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // No management call failed.
    expect(answers.filter((a) => typeof a.code === 'string')).toEqual([]);
    const chats = answers.filter((a) => a.object === 'chat.completion');
    expect(chats.length).toBe(2);
    expect(JSON.stringify(chats[0])).toContain('openai says: Hello');
    expect(JSON.stringify(chats[1])).toContain('openai says: Hello from the edge');
    // The upstream got the walkthrough's key and model.
    expect(upstream.requests.length).toBe(2);
    expect(upstream.requests[0]?.headers.authorization).toBe('Bearer sk-readme-upstream-key');
    expect(upstream.requests[0]?.body.model).toBe('gpt-4o-mini');
    // SearchRequestRecords found the request.
    const records = answers.find((a) => Array.isArray(a.records)) as { records: unknown[] } | undefined;
    expect(records?.records.length).toBeGreaterThanOrEqual(1);
    // The service account file is what the data plane read.
    const account = JSON.parse(readFileSync(join(dir, 'edge-eu.json'), 'utf8')) as {
      serviceAccount: { workspaceId: string; apiUri: string };
    };
    expect(account.serviceAccount.workspaceId).toBe('edge-eu');
    expect(account.serviceAccount.apiUri).toBe(`http://127.0.0.1:${ports.admin}`);
  }, 150_000);
});
