import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/** Per-request records: every field of the seed's table, searchable by both ids, with cost. */

let tg: TestGateway;
let p: Provisioned;

let world: World | undefined;
beforeAll(async () => {
  world = await startWorld();
  ({ tg, p } = world);
}, 60_000);
afterAll(() => stopWorld(world));

interface RecordView {
  requestId: string;
  clientRequestId?: string;
  timestamp: string;
  model: string;
  provider: string;
  httpStatus: number;
  latencyMs: number;
  stream: boolean;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  cost: string;
  apiKeyId: string;
  requestBody: unknown;
  responseBody: unknown;
  errorCode?: string;
}

const search = async (q: Record<string, unknown>) =>
  (await tg.must(admin('SearchRequestRecords'), q)) as { records: RecordView[]; nextPageToken: string };

test('a non-streaming request is recorded with every seed field and its cost', async () => {
  const res = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'my-trace-1' },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'record me' }] }),
  });
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id') ?? '';
  const byId = await search({ requestId });
  expect(byId.records).toHaveLength(1);
  const r = byId.records[0] as RecordView;
  expect(r).toMatchObject({
    requestId,
    clientRequestId: 'my-trace-1',
    model: 'gpt-mini',
    provider: 'openai',
    httpStatus: 200,
    stream: false,
    apiKeyId: p.keyId,
    usage: { promptTokens: 12, completionTokens: 7, totalTokens: 19 },
  });
  expect(Date.parse(r.timestamp)).toBeGreaterThan(Date.now() - 60_000);
  expect(r.latencyMs).toBeGreaterThanOrEqual(0);
  // 12 × 0.15 + 7 × 0.6 per million = 6e-6 USD
  expect(r.cost).toBe('0.000006');
  expect(r.requestBody).toMatchObject({ model: 'gpt-mini' });
  expect(JSON.stringify(r.responseBody)).toContain('openai says: record me');
  const byClient = await search({ clientRequestId: 'my-trace-1' });
  expect(byClient.records.map((x) => x.requestId)).toEqual([requestId]);
});

test('a streamed Messages request served by OpenAI is recorded with the upstream usage', async () => {
  const client = new Anthropic({
    baseURL: tg.url,
    apiKey: p.apiKey,
    maxRetries: 0,
    defaultHeaders: { 'x-client-request-id': 'stream-trace' },
  });
  const final = await client.messages
    .stream({ model: 'gpt-mini', max_tokens: 50, messages: [{ role: 'user', content: 'streamed record' }] })
    .finalMessage();
  expect(final.usage.output_tokens).toBe(7);
  const { records } = await search({ clientRequestId: 'stream-trace' });
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ stream: true, httpStatus: 200, usage: { promptTokens: 12, completionTokens: 7, totalTokens: 19 } });
});

test('rejected requests are recorded too, with their status and error code', async () => {
  const res = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'bad-one' },
    body: JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
  });
  expect(res.status).toBe(404);
  const { records } = await search({ clientRequestId: 'bad-one' });
  expect(records[0]).toMatchObject({ httpStatus: 404, errorCode: 'model_not_found' });
});

test('GetUsage groups requests, tokens and cost per key and per model', async () => {
  const byKey = (await tg.must(admin('GetUsage'), { customerId: 'acme', groupBy: 'api_key' })) as {
    groups: { key: string; requests: number; inputTokens: number; cost: string }[];
    total: { requests: number; cost: string };
  };
  const mine = byKey.groups.find((g) => g.key === p.keyId);
  expect(mine?.requests).toBeGreaterThanOrEqual(3);
  expect(byKey.total.requests).toBeGreaterThanOrEqual(3);
  const byModel = (await tg.must(admin('GetUsage'), { customerId: 'acme', groupBy: 'model' })) as {
    groups: { key: string; outputTokens: number }[];
  };
  expect(byModel.groups.find((g) => g.key === 'gpt-mini')?.outputTokens).toBe(14);
});

test('50 concurrent requests are all recorded (batched writes lose nothing)', async () => {
  await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      fetch(`${tg.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': `batch-${i}` },
        body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'b' }] }),
      }).then((r) => r.text()),
    ),
  );
  await tg.gw.records.flush();
  const { records } = await search({ customerId: 'acme', pageSize: 1000 });
  expect(records.filter((r) => r.clientRequestId?.startsWith('batch-'))).toHaveLength(50);
});
