import { afterAll, beforeAll, expect, test } from 'bun:test';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import { admin, apikeyOp } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 7, defects 1, 2 and 10 (records): poisoned requests and upstream replies (lone surrogates,
 * NUL, deep nesting, absurd token counts) must never hold back other tenants' records, are stored
 * cleaned and flagged where possible, and no log line written meanwhile carries a body or a secret.
 */

let w: World | undefined;
const lines: string[] = [];
const OTHER_UPSTREAM_KEY = 'sk-globex-upstream-SECRET-7f3a9c';
let otherKey = '';

interface RecordView {
  requestId: string;
  clientRequestId?: string;
  customerId: string;
  model: string;
  httpStatus: number;
  errorCode?: string;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  cost: string;
  sanitized?: string[];
  requestBody: unknown;
  responseBody: unknown;
}

beforeAll(async () => {
  setLogLevel('debug');
  setLogSink((line) => void lines.push(line));
  w = await startWorld();
  const { tg, oa } = w;
  // A second tenant, served by the same catalog model through its own connection and key.
  await tg.must(admin('CreateCustomer'), { customerId: 'globex', name: 'Globex' });
  await tg.must(admin('AddProjectModel'), { customerId: 'globex', projectId: 'default', modelId: w.p.models['gpt-mini'] });
  await tg.must(admin('CreateProviderConnection'), {
    customerId: 'globex',
    projectId: 'default',
    name: 'gx-openai',
    provider: 'openai',
    baseUrl: `${oa.url}/v1`,
    apiKey: OTHER_UPSTREAM_KEY,
  });
  await tg.must(admin('CreateRoute'), {
    customerId: 'globex',
    projectId: 'default',
    model: 'gpt-mini',
    targets: [{ connection: 'gx-openai', model: 'gpt-4o-mini' }],
  });
  const key = (await tg.must(apikeyOp('CreateApiKey'), {
    name: 'gx',
    userId: 'u2',
    enterpriseContext: { customerId: 'globex', projectId: 'default' },
  })) as { apiKey: string };
  otherKey = key.apiKey;
  // The mock OpenAI upstream misbehaves on cue: absurd usage numbers, a lone surrogate in its reply.
  oa.script((req) => {
    const messages = req.body.messages as { content: string }[];
    const text = String(messages.at(-1)?.content ?? '');
    if (text.startsWith('usage-huge')) return { text: 'ok MARK-REPLY-HUGE', usage: { input: 3_000_000_000, output: 3_000_000_000 } };
    if (text.startsWith('usage-fraction')) return { text: 'ok MARK-REPLY-FRACTION', usage: { input: 1.5, output: 2.5 } };
    if (text.startsWith('usage-negative')) return { text: 'ok MARK-REPLY-NEGATIVE', usage: { input: -5, output: -7 } };
    if (text.startsWith('reply-surrogate')) return { text: 'bad \udead MARK-REPLY-SURROGATE', usage: { input: 3, output: 4 } };
    return { text: `openai says: ${text}`, usage: { input: 12, output: 7 } };
  });
}, 60_000);

afterAll(async () => {
  await stopWorld(w);
  setLogSink(undefined);
  setLogLevel('error');
});

const send = async (apiKey: string, rawBody: string, clientId: string): Promise<{ status: number; requestId: string }> => {
  const res = await fetch(`${w?.tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-request-id': clientId },
    body: rawBody,
  });
  await res.text();
  return { status: res.status, requestId: res.headers.get('x-request-id') ?? '' };
};

const chat = (content: string, model = 'gpt-mini') =>
  `{"model":${JSON.stringify(model)},"messages":[{"role":"user","content":${JSON.stringify(content)}}]}`;

const deepBody = (depth: number): string =>
  `{"model":"gpt-mini","messages":[{"role":"user","content":"deep MARK-BODY-DEEP"}],"tools":[{"type":"function","function":{"name":"f","parameters":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}]}`;

const search = async (q: Record<string, unknown>): Promise<RecordView[]> => {
  const body = (await w?.tg.must(admin('SearchRequestRecords'), { pageSize: 1000, ...q })) as { records: RecordView[] };
  return body.records;
};

const waitFor = async <T>(probe: () => Promise<T | undefined>, ms: number): Promise<T | undefined> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined || Date.now() > until) return v;
    await Bun.sleep(100);
  }
};

test('poisoned rows never hold back other tenants, are stored cleaned and flagged, and no log line leaks', async () => {
  const world = w as World;
  const acme = world.p.apiKey;
  const poisons: Record<string, string> = {
    'p-surrogate-body': '{"model":"gpt-mini","messages":[{"role":"user","content":"x\\udead MARK-BODY-SURROGATE"}]}',
    'p-nul-model': chat('MARK-BODY-NUL', 'gpt-mini\u0000x'),
    'p-deep': deepBody(20_000),
    'p-usage-huge': chat('usage-huge MARK-BODY-HUGE'),
    'p-usage-fraction': chat('usage-fraction MARK-BODY-FRACTION'),
    'p-usage-negative': chat('usage-negative MARK-BODY-NEGATIVE'),
    'p-reply-surrogate': chat('reply-surrogate MARK-BODY-REPLY'),
  };
  const poisonIds: Record<string, string> = {};
  for (const [clientId, body] of Object.entries(poisons)) {
    const r = await send(acme, body, clientId);
    expect(r.status).toBeLessThan(600);
    poisonIds[clientId] = r.requestId;
  }
  // Ordinary requests of another tenant, sent after the poison, are all recorded promptly.
  const ordinary = await Promise.all(Array.from({ length: 30 }, (_, i) => send(otherKey, chat(`hello ${i}`), `gx-${i}`)));
  for (const r of ordinary) expect(r.status).toBe(200);
  const found = await waitFor(async () => {
    const rows = await search({ customerId: 'globex' });
    return rows.length >= 30 ? rows : undefined;
  }, 5_000);
  expect(found?.length).toBe(30);

  // The poisoned rows themselves are stored, cleaned and flagged.
  const byClient = async (id: string): Promise<RecordView> => {
    const rows = await search({ clientRequestId: id });
    expect(rows).toHaveLength(1);
    return rows[0] as RecordView;
  };
  const huge = await byClient('p-usage-huge');
  expect(huge.usage.promptTokens).toBe(2_147_483_647);
  expect(huge.usage.totalTokens).toBe(2_147_483_647);
  expect(huge.sanitized).toContain('usage');
  expect(Number(huge.cost)).toBeGreaterThan(0);
  const fraction = await byClient('p-usage-fraction');
  expect(fraction.usage).toMatchObject({ promptTokens: 2, completionTokens: 3, totalTokens: 5 });
  expect(fraction.sanitized).toContain('usage');
  const negative = await byClient('p-usage-negative');
  expect(negative.usage).toMatchObject({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  expect(negative.cost.startsWith('-')).toBe(false);
  expect(negative.sanitized).toContain('usage');
  const surrogate = await byClient('p-surrogate-body');
  expect(surrogate.sanitized).toContain('text');
  expect(JSON.stringify(surrogate.requestBody)).toContain('MARK-BODY-SURROGATE');
  const reply = await byClient('p-reply-surrogate');
  expect(reply.sanitized).toContain('text');
  expect(JSON.stringify(reply.responseBody)).toContain('MARK-REPLY-SURROGATE');
  const nul = await byClient('p-nul-model');
  expect(nul.model).toBe('gpt-minix');
  expect(nul.sanitized).toContain('text');
  const deep = await byClient('p-deep');
  expect(deep.requestId).toBe(poisonIds['p-deep'] as string);
  // The listener refuses it before parsing (nesting limit): recorded as that 400, body not kept.
  expect(deep.httpStatus).toBe(400);
  expect(deep.errorCode).toBe('nesting_too_deep');
  expect(deep.requestBody ?? null).toBeNull();

  // The sink's counters are visible on the inference listener's /readyz.
  const ready = (await (await fetch(`${world.tg.url}/readyz`)).json()) as {
    records: { sanitized: number; dropped: number; queued: number };
  };
  expect(ready.records.sanitized).toBeGreaterThanOrEqual(3);
  expect(ready.records.queued).toBe(0);
  expect(ready.records.dropped).toBe(0);

  // No log line carries a body, a marker or a secret the test created.
  const secrets = ['MARK-', 'sk-upstream-openai-secret', OTHER_UPSTREAM_KEY, acme, otherKey, 'hello 1', '{"a":{"a"'];
  for (const line of lines) for (const s of secrets) expect(line.includes(s) ? `${s} in ${line.slice(0, 200)}` : '').toBe('');
  expect(lines.every((l) => l.length < 2_000)).toBe(true);
}, 60_000);
