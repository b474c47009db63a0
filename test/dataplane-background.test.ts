import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import OpenAI from 'openai';
import { type DataNode, startDataNode } from '../src/app-data.ts';
import { loadConfig } from '../src/config/env.ts';
import { admin } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Background responses and conversations across separate data planes of one customer (issue 26
 * defects 4 and 7): created through data plane A, polled, resumed and cancelled through B; a
 * conversation created through A is used through B. A worker that goes away never leaves a response
 * waiting: a data plane stopped mid-run stores it failed, and one killed outright (a separate
 * process, SIGKILL) is found failed by B once its lease ran out.
 */

const ROOT = join(import.meta.dir, '..');
const LEASE = '1500ms';
let w: World;
let dir: string;
const nodes: Record<'a' | 'b', DataNode | undefined> = { a: undefined, b: undefined };
let killed: Subprocess | undefined;

const saFile = async (workspaceId: string): Promise<string> => {
  await w.tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId });
  const created = await w.tg.must(admin('CreateServiceAccount'), { customerId: 'acme', workspaceId, apiUri: w.tg.adminUrl });
  const file = join(dir, `sa-${workspaceId}.json`);
  writeFileSync(file, JSON.stringify(created), { mode: 0o600 });
  return file;
};
const ENV = {
  GATEWAY_HOST: '127.0.0.1',
  GATEWAY_METRICS_PORT: '0',
  WORKER_POLL_INTERVAL: '100ms',
  GATEWAY_LOG_LEVEL: 'error',
  GATEWAY_SHUTDOWN_GRACE: '300ms',
  GATEWAY_BACKGROUND_LEASE: LEASE,
};
const startNode = async (name: 'a' | 'b') =>
  startDataNode(
    loadConfig(['serve', '--role', 'data', '--service-account', await saFile(`edge-${name}`)], {
      ...ENV,
      GATEWAY_PORT: '0',
      GATEWAY_DATA_DIR: join(dir, name),
    }),
  );
const sdkAt = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
const sdk = (n: 'a' | 'b') => sdkAt(nodes[n]?.inferenceUrl ?? '');

const pollUntilDone = async (client: OpenAI, id: string, timeoutMs = 20_000) => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.responses.retrieve(id);
    if (r.status !== 'queued' && r.status !== 'in_progress') return r;
    if (Date.now() > until) throw new Error(`still ${r.status} after ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
};
/** Waits until the mock upstream got one more request than `before`. */
const upstreamCalled = async (before: number) => {
  for (let i = 0; i < 300 && w.an.requests.length === before; i++) await Bun.sleep(20);
  expect(w.an.requests.length).toBeGreaterThan(before);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-bg-'));
  w = await startWorld({ WORKER_POLL_INTERVAL: '100ms' });
  nodes.a = await startNode('a');
  nodes.b = await startNode('b');
}, 60_000);

afterAll(async () => {
  killed?.kill('SIGKILL');
  for (const n of Object.values(nodes)) await n?.stop(500);
  await stopWorld(w);
  rmSync(dir, { recursive: true, force: true });
});

describe('background responses across data planes', () => {
  test('created through A, polled to completed through B', async () => {
    w.an.script(() => ({ text: 'done on A', delayMs: 400 }));
    try {
      const created = await sdk('a').responses.create({ model: 'claude-mini', input: 'slow job', background: true });
      expect(created.status).toBe('queued');
      const seenOnB = await sdk('b').responses.retrieve(created.id);
      expect(['queued', 'in_progress']).toContain(String(seenOnB.status));
      const done = await pollUntilDone(sdk('b'), created.id);
      expect(done.status).toBe('completed');
      expect(done.output_text).toBe('done on A');
    } finally {
      w.an.script(undefined);
    }
  });

  test('streamed through A, resumed through B from starting_after', async () => {
    w.an.script(() => ({ text: 'alpha beta gamma delta epsilon zeta eta theta', chunkDelayMs: 150 }));
    try {
      const stream = await sdk('a').responses.create({ model: 'claude-mini', input: 'letters', background: true, stream: true });
      let id = '';
      let last = -1;
      for await (const e of stream) {
        if (e.type === 'response.created') id = e.response.id;
        last = e.sequence_number;
        if (last === 3) break;
      }
      const resumed = sdk('b').responses.stream({ response_id: id, starting_after: last });
      const seq: number[] = [];
      for await (const e of resumed) seq.push(e.sequence_number);
      expect(seq[0]).toBe(last + 1);
      expect(seq).toEqual(seq.map((_, i) => last + 1 + i));
      const final = await resumed.finalResponse();
      expect(final.status).toBe('completed');
      expect(final.output_text).toBe('alpha beta gamma delta epsilon zeta eta theta');
    } finally {
      w.an.script(undefined);
    }
  });

  test('cancelled through B while A runs it: A aborts the upstream call', async () => {
    w.an.script(() => ({ text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 100 }));
    try {
      const before = w.an.requests.length;
      const cancelledBefore = w.an.cancelled;
      const stream = await sdk('a').responses.create({ model: 'claude-mini', input: 'a long stream', background: true, stream: true });
      let id = '';
      for await (const e of stream) {
        if (e.type === 'response.created') {
          id = e.response.id;
          break;
        }
      }
      await upstreamCalled(before);
      const cancelled = await sdk('b').responses.cancel(id);
      expect(cancelled.status).toBe('cancelled');
      // A sees the cancel at its next heartbeat and aborts the upstream stream.
      for (let i = 0; i < 100 && w.an.cancelled === cancelledBefore; i++) await Bun.sleep(50);
      expect(w.an.cancelled).toBeGreaterThan(cancelledBefore);
      await Bun.sleep(300);
      expect((await sdk('a').responses.retrieve(id)).status).toBe('cancelled');
    } finally {
      w.an.script(undefined);
    }
  });

  test('a conversation created through A is used and listed through B', async () => {
    const c = await sdk('a').conversations.create({ items: [{ type: 'message', role: 'user', content: 'the code word is medlar' }] });
    const r = await sdk('b').responses.create({ model: 'claude-mini', input: 'what is the code word?', conversation: c.id });
    expect(JSON.stringify(w.an.requests.at(-1)?.body)).toContain('the code word is medlar');
    const items = (await sdk('a').conversations.items.list(c.id, { order: 'asc' })).data;
    expect(items.length).toBe(3);
    expect(JSON.stringify(items.at(-1))).toContain(r.output_text);
  });

  test('a data plane stopped mid-run stores the response failed', async () => {
    w.an.script(() => ({ text: 'too late', delayMs: 10_000 }));
    try {
      const before = w.an.requests.length;
      const created = await sdk('a').responses.create({ model: 'claude-mini', input: 'outlive me', background: true });
      await upstreamCalled(before);
      await nodes.a?.stop(300);
      nodes.a = undefined;
      const r = await sdk('b').responses.retrieve(created.id);
      expect(r.status).toBe('failed');
      expect(r.error?.message).toContain('shut down before it finished');
    } finally {
      w.an.script(undefined);
    }
  });

  test('a data plane killed mid-run: B finds the response failed once its lease ran out', async () => {
    const port = (() => {
      const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
      const p = s.port as number;
      s.stop(true);
      return p;
    })();
    const file = await saFile('edge-k');
    killed = Bun.spawn(['bun', 'src/main.ts', 'serve', '--role', 'data', '--service-account', file], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...ENV,
        GATEWAY_PORT: String(port),
        GATEWAY_DATA_DIR: join(dir, 'k'),
      },
      stdout: 'ignore',
      stderr: 'inherit',
    });
    const k = sdkAt(`http://127.0.0.1:${port}`);
    for (let i = 0; i < 300; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await Bun.sleep(100);
    }
    w.an.script(() => ({ text: 'never', delayMs: 20_000 }));
    try {
      const before = w.an.requests.length;
      const created = await k.responses.create({ model: 'claude-mini', input: 'crash during me', background: true });
      await upstreamCalled(before);
      expect(['queued', 'in_progress']).toContain(String((await sdk('b').responses.retrieve(created.id)).status));
      killed.kill('SIGKILL');
      await killed.exited;
      killed = undefined;
      const t0 = Date.now();
      const r = await pollUntilDone(sdk('b'), created.id, 10_000);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(r.status).toBe('failed');
      expect(r.error?.message).toContain('stopped (its data plane restarted or was lost)');
      // Cancelling it now is OpenAI's answer for a finished response.
      expect(
        await sdk('b')
          .responses.cancel(created.id)
          .catch((e: unknown) => (e as { status: number }).status),
      ).toBe(400);
    } finally {
      w.an.script(undefined);
    }
  }, 60_000);
});
