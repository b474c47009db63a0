import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin } from './support/gateway.ts';
import { connectMcp } from './support/mcp-gateway.ts';
import { type OpsWorld, startOpsWorld } from './support/ops-traffic.ts';

/**
 * Contract §17 "Records": SearchRequestRecords shows `cache` and `costSavedUsd` (stored, not
 * returned before), the guardrail decisions the record keeps, and `method`/`tool` on MCP records.
 */

let o: OpsWorld;
const acme = { customerId: 'acme', projectId: 'default' };

beforeAll(async () => {
  o = await startOpsWorld(0);
  const { tg } = o.world;
  await tg.must(admin('UpsertProjectSetting'), {
    ...acme,
    settingName: 'response-cache',
    settingValue: JSON.stringify({ mode: 'exact', ttlSeconds: 60 }),
  });
  await tg.must(admin('CreateGuardrail'), {
    ...acme,
    name: 'watch-word',
    stage: 'input',
    kind: 'regex',
    pattern: 'WATCHME',
    action: 'flag',
  });
}, 60_000);

afterAll(async () => {
  await o?.stop();
});

type Rec = Record<string, unknown>;

const recordOf = async (query: Record<string, string>): Promise<Rec> => {
  for (let i = 0; i < 100; i++) {
    const found = (await o.world.tg.must(admin('SearchRequestRecords'), query)) as { records: Rec[] };
    if (found.records[0]) return found.records[0];
    await Bun.sleep(50);
  }
  throw new Error(`no record for ${JSON.stringify(query)}`);
};

const chat = async (content: string): Promise<string> => {
  const res = await fetch(`${o.world.tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${o.world.p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  return res.headers.get('x-request-id') ?? '';
};

test('a cache miss then a hit: `cache` on both, `costSavedUsd` on the hit equal to the miss cost, its own cost 0', async () => {
  const q = `a question at ${Date.now()}`;
  const miss = await recordOf({ requestId: await chat(q) });
  const hit = await recordOf({ requestId: await chat(q) });
  expect(miss.cache).toBe('miss');
  expect(miss.costSavedUsd).toBeUndefined();
  expect(Number(miss.cost)).toBeGreaterThan(0);
  expect(hit).toMatchObject({ cache: 'hit', costSavedUsd: miss.cost });
  expect(Number(hit.cost)).toBe(0);
  expect(miss.method).toBeUndefined();
  expect(miss.guardrails).toEqual([]);
});

test('a flag guardrail that matched is a decision on the record', async () => {
  const r = await recordOf({ requestId: await chat(`please WATCHME ${Date.now()}`) });
  expect(r.guardrails).toEqual([{ name: 'watch-word', action: 'flag' }]);
});

test("an MCP tool call's record names its method and the server's tool", async () => {
  const { client, requestIds } = await connectMcp(`${o.world.tg.url}/mcp/tools`, o.world.p.apiKey);
  await client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } });
  await client.close();
  const id = requestIds.find((r) => r.method === 'tools/call')?.id ?? '';
  const r = await recordOf({ requestId: id });
  expect(r).toMatchObject({ endpoint: '/mcp/tools', provider: 'mcp', connection: 'alpha', method: 'tools/call', tool: 'echo' });
});
