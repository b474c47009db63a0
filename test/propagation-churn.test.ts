import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_TOKEN, admin, apikeyOp } from './support/gateway.ts';
import { startMockUpstream, type MockUpstream, type Recorded } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Configuration churn under load (issue 13, item 8): concurrent inference requests over real HTTP,
 * streaming and not, while 50 management writes land (route targets and weights changed, models and
 * routes added, API keys created and revoked): every request that should succeed does. A stream in
 * flight finishes on the snapshot it started with, although its route moved and its key was revoked.
 */

const userText = (r: Recorded): string => {
  const msgs = (r.body.messages as { content: string }[] | undefined) ?? [];
  return msgs[msgs.length - 1]?.content ?? '';
};

let w: World | undefined;
let b: MockUpstream | undefined;
const C = { customerId: 'acme', projectId: 'default' };

/** A management write straight over HTTP (no waiting for propagation, unlike the harness's `call`). */
const write = async (op: string, body: unknown): Promise<Record<string, unknown>> => {
  const world = w as World;
  const res = await fetch(`${world.tg.adminUrl}${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(body),
  });
  const parsed = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${op} → ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
};

const infer = async (key: string, model: string, stream: boolean, text: string): Promise<{ status: number; text: string }> => {
  const world = w as World;
  const res = await fetch(`${world.tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: text }] }),
  });
  return { status: res.status, text: await res.text() };
};

/** The answer's text: a chat completion's content, or a stream's deltas joined (which must end with [DONE]). */
const contentOf = (body: string, stream: boolean): string => {
  if (!stream) return String((JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0]?.message.content);
  if (!body.trimEnd().endsWith('data: [DONE]')) throw new Error(`stream did not end with [DONE]: ${body.slice(-200)}`);
  let out = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const chunk = JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[]; error?: unknown };
    if (chunk.error) throw new Error(`error event: ${line}`);
    out += chunk.choices?.[0]?.delta?.content ?? '';
  }
  return out;
};

beforeAll(async () => {
  w = await startWorld();
  b = startMockUpstream('openai');
  // The two upstreams answer distinguishably.
  w.oa.script((r) => ({ text: `A says ${userText(r)}`, usage: { input: 5, output: 3 } }));
  b.script((r) => ({ text: `B says ${userText(r)}`, usage: { input: 5, output: 3 } }));
  await w.tg.must(admin('CreateProviderConnection'), {
    ...C,
    name: 'mock-b',
    provider: 'openai',
    baseUrl: `${b.url}/v1`,
    apiKey: 'sk-upstream-b-secret',
  });
}, 60_000);

afterAll(async () => {
  await stopWorld(w);
  b?.stop();
});

describe('configuration churn', () => {
  test('50 changes land while streaming and non-streaming requests run: no request that should succeed fails', async () => {
    const world = w as World;
    const keys = [world.p.apiKey];
    const models = ['gpt-mini'];
    const failures: string[] = [];
    let done = 0;
    let stop = false;
    const seen = { A: 0, B: 0 };
    const client = async (n: number) => {
      for (let i = 0; !stop; i++) {
        // Only keys and models whose change is served are used (a key is usable once propagated).
        const key = keys[(n + i) % keys.length] as string;
        const model = models[(n * 7 + i) % models.length] as string;
        const stream = (n + i) % 2 === 0;
        const text = `c${n} r${i}`;
        try {
          const r = await infer(key, model, stream, text);
          if (r.status !== 200) throw new Error(`${r.status} ${r.text.slice(0, 200)}`);
          const content = contentOf(r.text, stream);
          const m = /^(A|B) says (.*)$/.exec(content);
          if (!m || m[2] !== text) throw new Error(`unexpected answer ${JSON.stringify(content)}`);
          seen[m[1] as 'A' | 'B']++;
          done++;
        } catch (e) {
          failures.push(`${model} stream=${stream}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    };
    const clients = Array.from({ length: 6 }, (_, n) => client(n));

    const routeOf = async (model: string) =>
      ((await write(admin('ListRoutes'), C)) as { routes: { id: string; model: string }[] }).routes.find((r) => r.model === model)
        ?.id as string;
    const gptRoute = await routeOf('gpt-mini');
    const target = (connection: string, weight = 1, priority = 0) => ({ connection, model: 'gpt-4o-mini', priority, weight });
    let changes = 0;
    for (let i = 0; changes < 50; i++) {
      switch (i % 5) {
        case 0:
          await write(admin('UpdateRoute'), { id: gptRoute, targets: [target('mock-b')] });
          changes++;
          break;
        case 1:
          await write(admin('UpdateRoute'), { id: gptRoute, targets: [target('mock-openai', 1), target('mock-b', 3)] });
          changes++;
          break;
        case 2:
          await write(admin('UpdateRoute'), { id: gptRoute, targets: [target('mock-b', 1, 0), target('mock-openai', 1, 1)] });
          changes++;
          break;
        case 3: {
          const created = (await write(apikeyOp('CreateApiKey'), { name: `churn-${i}`, userId: 'u1', enterpriseContext: C })) as {
            apiKey: string;
          };
          changes++;
          await world.tg.settle();
          keys.push(created.apiKey);
          break;
        }
        case 4: {
          const model = `churn-${i}`;
          const m = (await write(admin('CreateModel'), {
            model,
            provider: 'openai',
            mode: 'chat',
            capabilities: ['chat'],
            contextWindow: 8192,
            maxOutputTokens: 1024,
          })) as {
            model: { id: string };
          };
          await write(admin('AddProjectModel'), { ...C, modelId: m.model.id });
          await write(admin('CreateRoute'), { ...C, model, targets: [target(i % 2 === 0 ? 'mock-openai' : 'mock-b')] });
          changes += 3;
          await world.tg.settle();
          models.push(model);
          break;
        }
      }
    }
    await world.tg.settle();
    // Requests keep running on the last configuration for a moment.
    await Bun.sleep(300);
    stop = true;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(done).toBeGreaterThan(50);
    expect(seen.A).toBeGreaterThan(0);
    expect(seen.B).toBeGreaterThan(0);
    expect(models.length).toBeGreaterThan(5);
    expect(keys.length).toBeGreaterThan(5);
  }, 120_000);

  test('a stream in flight finishes on the snapshot it started with: route moved and key revoked meanwhile', async () => {
    const world = w as World;
    const key = (await world.tg.must(apikeyOp('CreateApiKey'), { name: 'inflight', userId: 'u1', enterpriseContext: C })) as {
      apiKey: string;
      id: string;
    };
    const other = (await world.tg.must(apikeyOp('CreateApiKey'), { name: 'other', userId: 'u1', enterpriseContext: C })) as {
      apiKey: string;
    };
    const m = (await world.tg.must(admin('CreateModel'), {
      model: 'slow',
      provider: 'openai',
      mode: 'chat',
      capabilities: ['chat'],
      contextWindow: 8192,
      maxOutputTokens: 1024,
    })) as {
      model: { id: string };
    };
    await world.tg.must(admin('AddProjectModel'), { ...C, modelId: m.model.id });
    const route = (await world.tg.must(admin('CreateRoute'), {
      ...C,
      model: 'slow',
      targets: [{ connection: 'mock-openai', model: 'gpt-4o-mini' }],
    })) as { route: { id: string } };
    world.oa.script((r) => ({
      text: `A says ${userText(r)} one two three four five six seven eight`,
      chunkDelayMs: 120,
      usage: { input: 5, output: 9 },
    }));
    try {
      const before = world.tg.gw.snapshots.current?.revision ?? -1;
      const res = await fetch(`${world.tg.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key.apiKey}` },
        body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'inflight' }] }),
      });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const dec = new TextDecoder();
      let body = dec.decode((await reader.read()).value);
      // The stream is open: move the route to B, then revoke its key; both are served before it ends.
      await world.tg.must(admin('UpdateRoute'), { id: route.route.id, targets: [{ connection: 'mock-b', model: 'gpt-4o-mini' }] });
      await world.tg.must(apikeyOp('RevokeApiKey'), { id: key.id });
      expect(world.tg.gw.snapshots.current?.revision ?? -1).toBeGreaterThan(before);
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        body += dec.decode(r.value);
      }
      expect(contentOf(body, true)).toBe('A says inflight one two three four five six seven eight');
      // Requests that start now see the new snapshot.
      expect((await infer(key.apiKey, 'slow', false, 'after')).status).toBe(401);
      const after = await infer(other.apiKey, 'slow', false, 'after');
      expect(after.status).toBe(200);
      expect(contentOf(after.text, false)).toStartWith('B says after');
    } finally {
      world.oa.script((r) => ({ text: `A says ${userText(r)}`, usage: { input: 5, output: 3 } }));
    }
  }, 60_000);
});
