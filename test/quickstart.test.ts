import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The README's first command as a user runs it: `bun src/main.ts serve` (what `bun run start`
 * runs) with an empty data dir seeds the demo and prints a curl that works; a restart keeps the
 * data; a bad setting stops start-up with one line naming it.
 */

const ROOT = join(import.meta.dir, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const freePort = (): number => {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port as number;
  s.stop(true);
  return port;
};

interface Started {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  lines: string[];
}

/** Starts the gateway and collects stdout until the ready line (and what follows it briefly). */
const start = async (env: Record<string, string>): Promise<Started> => {
  const proc = Bun.spawn(['bun', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_LOG_LEVEL: 'error', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const lines: string[] = [];
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    lines.push(...parts);
    // The ready line is the last line start-up prints.
    if (lines.some((l) => l.includes('ready in'))) break;
  }
  reader.releaseLock();
  return { proc, lines };
};

const stop = async (s: Started) => {
  s.proc.kill('SIGTERM');
  await s.proc.exited;
};

describe('quick start', () => {
  test('first start seeds the demo, prints the admin token and a working curl; restart keeps data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-quick-'));
    dirs.push(dir);
    const port = freePort();
    const adminPort = freePort();
    const env = { GATEWAY_DATA_DIR: dir, GATEWAY_PORT: String(port), GATEWAY_ADMIN_PORT: String(adminPort) };
    const first = await start(env);
    try {
      const tokenLine = first.lines.find((l) => /admin/i.test(l) && /token/i.test(l));
      expect(tokenLine).toBeDefined();
      const curl = first.lines.find((l) => l.trim().startsWith('curl '));
      expect(curl).toBeDefined();
      const key = /Bearer (sk-[A-Za-z0-9_-]+)/.exec(curl ?? '')?.[1];
      const body = /-d '(.*)'$/.exec(curl ?? '')?.[1];
      expect(key).toBeDefined();
      const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(200);
      const json = (await res.json()) as { choices: { message: { content: string } }[]; usage: { prompt_tokens: number } };
      expect(json.choices[0]?.message.content).toBe('Hello, gateway!');
      expect(json.usage.prompt_tokens).toBeGreaterThan(0);
      const token = /token[^:]*:\s*(\S+)\s*$/.exec(tokenLine ?? '')?.[1];
      const adminRes = await fetch(`http://127.0.0.1:${adminPort}/admin.v1.AdminService/GetCustomer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: 'demo' }),
      });
      expect(adminRes.status).toBe(200);
      await stop(first);

      const second = await start(env);
      try {
        expect(second.lines.some((l) => l.includes('curl '))).toBe(false);
        expect(second.lines.some((l) => /generated admin token/i.test(l))).toBe(false);
        const again = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        });
        expect(again.status).toBe(200);
      } finally {
        await stop(second);
      }
    } finally {
      if (first.proc.exitCode === null) await stop(first);
    }
  }, 120_000);

  const badSettings: [string, Record<string, string>, RegExp][] = [
    ['an unknown role', {}, /--role/],
    ['a malformed duration', { WORKER_POLL_INTERVAL: 'soon' }, /WORKER_POLL_INTERVAL/],
    ['DATABASE_URL without GATEWAY_KEK', { DATABASE_URL: 'postgres://127.0.0.1:1/x' }, /GATEWAY_KEK/],
    [
      'an unreachable DATABASE_URL',
      { DATABASE_URL: 'postgres://u:p@127.0.0.1:1/x', GATEWAY_KEK: Buffer.alloc(32, 1).toString('base64') },
      /DATABASE_URL/,
    ],
    ['a bad port', { GATEWAY_PORT: '99999' }, /GATEWAY_PORT/],
  ];
  for (const [what, env, pattern] of badSettings) {
    test(`${what} stops start-up with one clear line`, async () => {
      const args = what === 'an unknown role' ? ['--role', 'sideways'] : [];
      const proc = Bun.spawn(['bun', 'src/main.ts', 'serve', ...args], {
        cwd: ROOT,
        env: { ...process.env, GATEWAY_DATA_DIR: 'memory://', GATEWAY_PORT: '0', GATEWAY_ADMIN_PORT: '0', ...env },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const code = await proc.exited;
      const err = (await new Response(proc.stderr).text()).trim();
      expect(code).not.toBe(0);
      expect(err.split('\n')).toHaveLength(1);
      expect(err).toMatch(pattern);
    }, 30_000);
  }

  test('a port already in use stops start-up naming the setting', async () => {
    const busy = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    try {
      const proc = Bun.spawn(['bun', 'src/main.ts', 'serve'], {
        cwd: ROOT,
        env: { ...process.env, GATEWAY_DATA_DIR: 'memory://', GATEWAY_PORT: String(busy.port), GATEWAY_ADMIN_PORT: '0' },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const code = await proc.exited;
      const err = (await new Response(proc.stderr).text()).trim();
      expect(code).not.toBe(0);
      expect(err).toMatch(/GATEWAY_PORT/);
    } finally {
      busy.stop(true);
    }
  }, 30_000);
});
