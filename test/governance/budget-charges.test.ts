import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { inputTokenBound } from '../../src/governance/token-bound.ts';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, type Recorded, type Scripted, startMockUpstream } from '../support/mock-upstreams.ts';
import { awayFromMinuteEdge, chat, meteredWorld, type World } from './support.ts';

/**
 * What a request is charged when its usage is not what it looks like: streams that end early (the
 * client aborts, the upstream breaks) are settled at the usage seen so far or at the reservation —
 * never at 0 — in budgets, tokens per minute and the record alike; and input the chars/4 rule
 * under-counts (CJK) is reserved at no less than it costs.
 */
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let w: World;

/** USD per million tokens: an input token costs 1,000 nano-USD, an output token 2,000. */
const PRICES = { input: 1, output: 2 };
const nano = (input: number, output: number): number => input * 1000 + output * 2000;
const MAX = 200;
/** What the mock upstreams stream: 40 text deltas, 25 ms apart; usage 500 in, 40 out (reported at the end). */
const STREAM: Scripted = {
  textChunks: Array.from({ length: 40 }, (_, i) => `word${i} `),
  usage: { input: 500, output: 40 },
  chunkDelayMs: 25,
};

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url, 'charges', { prices: PRICES });
  await tg.must(admin('UpsertBudget'), {
    customerId: w.customerId,
    projectId: w.projectId,
    name: 'streams',
    limitUsd: '1000',
    period: 'total',
  });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
});

type Format = 'chat' | 'messages' | 'responses';
const PATH: Record<Format, string> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };
const bodyOf = (format: Format, model: string): Record<string, unknown> =>
  format === 'responses'
    ? { model, stream: true, max_output_tokens: MAX, input: 'tell me a long story' }
    : { model, stream: true, max_tokens: MAX, messages: [{ role: 'user', content: 'tell me a long story' }] };

const spentNano = async (customerId: string, name: string): Promise<number> => {
  const got = (await tg.must(admin('GetBudget'), { customerId, projectId: 'default', name })) as { budget: { spentUsd: string } };
  return Math.round(Number(got.budget.spentUsd) * 1e9);
};

interface RecordView {
  cost: string;
  errorCode?: string;
  usage: { promptTokens: number; completionTokens: number };
}

/** The request's record, once the writer flushed it. */
const recordOf = async (requestId: string): Promise<RecordView> => {
  for (let i = 0; i < 100; i++) {
    await tg.gw.records.flush();
    const found = (await tg.must(admin('SearchRequestRecords'), { requestId })) as { records: RecordView[] };
    if (found.records[0]) return found.records[0];
    await Bun.sleep(50);
  }
  throw new Error(`no record for ${requestId}`);
};

/** Streams `body`, reads `events` SSE events, then goes away. Returns the gateway's request id. */
const abortedStream = async (path: string, body: Record<string, unknown>, events = 12): Promise<string> => {
  const ac = new AbortController();
  const res = await fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let text = '';
  while ((text.match(/\n\n/g)?.length ?? 0) < events) {
    const r = await reader.read();
    if (r.done) break;
    text += dec.decode(r.value, { stream: true });
  }
  expect(text).toContain('word1');
  expect(text).not.toContain('word39');
  ac.abort();
  return res.headers.get('x-request-id') as string;
};

/** Streams `body` to the end (the upstream breaks it). Returns the gateway's request id. */
const brokenStream = async (path: string, body: Record<string, unknown>): Promise<string> => {
  const res = await fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('error');
  return res.headers.get('x-request-id') as string;
};

/** Waits until the budget moved past `before` (settlement runs when the gateway notices the abort). */
const spentAfter = async (before: number): Promise<number> => {
  for (let i = 0; i < 60; i++) {
    const now = await spentNano(w.customerId, 'streams');
    if (now !== before) return now;
    await Bun.sleep(50);
  }
  return spentNano(w.customerId, 'streams');
};

/** The charge must be what the record says, never 0, and as the rule gives it. */
const expectCharged = async (
  run: () => Promise<string>,
  body: Record<string, unknown>,
  upstream: 'openai' | 'anthropic',
  errorCode: string,
): Promise<void> => {
  const before = await spentNano(w.customerId, 'streams');
  const id = await run();
  const rec = await recordOf(id);
  const charged = (await spentAfter(before)) - before;
  expect(rec.errorCode).toBe(errorCode);
  expect(rec.cost).not.toBe('0');
  expect(charged).toBeGreaterThan(0);
  expect(Math.round(Number(rec.cost) * 1e9)).toBe(charged);
  if (upstream === 'openai') {
    // No usage before the end of the stream: the input (its bound) and what was streamed (one token per
    // character), never the whole reservation once part of the answer arrived (contract §14).
    const input = inputTokenBound(JSON.stringify(body));
    expect(rec.usage.promptTokens).toBe(input);
    expect(rec.usage.completionTokens).toBeGreaterThan(0);
    expect(rec.usage.completionTokens).toBeLessThan(MAX);
    expect(charged).toBe(nano(input, rec.usage.completionTokens));
  } else {
    // message_start reported the input (500) and 1 output token; the output streamed since is counted.
    expect(rec.usage.promptTokens).toBe(500);
    expect(rec.usage.completionTokens).toBeGreaterThan(1);
    expect(rec.usage.completionTokens).toBeLessThanOrEqual(MAX);
    expect(charged).toBe(nano(500, rec.usage.completionTokens));
  }
};

describe('a stream the client aborts is charged', () => {
  beforeAll(() => {
    oa.script(() => STREAM);
    an.script(() => STREAM);
  });
  afterAll(() => {
    oa.script(undefined);
    an.script(undefined);
  });
  const cases: [Format, string, 'openai' | 'anthropic', string][] = [
    ['chat', 'metered', 'openai', 'same format'],
    ['chat', 'claude-mini', 'anthropic', 'translated'],
    ['messages', 'claude-mini', 'anthropic', 'same format'],
    ['messages', 'metered', 'openai', 'translated'],
    ['responses', 'metered', 'openai', 'same format'],
    ['responses', 'claude-mini', 'anthropic', 'translated'],
  ];
  for (const [format, model, upstream, kind] of cases) {
    test(`${format} client → ${upstream} upstream (${kind})`, async () => {
      const body = bodyOf(format, model);
      await expectCharged(() => abortedStream(PATH[format], body), body, upstream, 'client_closed');
      const sent = (upstream === 'openai' ? oa : an).requests.at(-1)?.path;
      expect(sent).toBe(upstream === 'anthropic' ? '/v1/messages' : format === 'responses' ? '/v1/responses' : '/v1/chat/completions');
    }, 30_000);
  }
});

describe('a stream the upstream breaks is charged', () => {
  afterAll(() => {
    oa.script(undefined);
    an.script(undefined);
  });
  test('chat client → openai upstream that closes the connection mid-stream', async () => {
    oa.script(() => ({ ...STREAM, chunkDelayMs: 0, cutAfter: 10 }));
    const body = bodyOf('chat', 'metered');
    await expectCharged(() => brokenStream(PATH.chat, body), body, 'openai', 'bad_gateway');
  }, 30_000);
  test('messages client → anthropic upstream that closes the connection mid-stream', async () => {
    an.script(() => ({ ...STREAM, chunkDelayMs: 0, cutAfter: 10 }));
    const body = bodyOf('messages', 'claude-mini');
    await expectCharged(() => brokenStream(PATH.messages, body), body, 'anthropic', 'bad_gateway');
  }, 30_000);
});

test('tokens per minute: an aborted stream keeps its reservation in the window', async () => {
  oa.script(() => STREAM);
  try {
    await awayFromMinuteEdge();
    const body = bodyOf('chat', 'metered');
    const reserved = inputTokenBound(JSON.stringify(body)) + MAX;
    await tg.must(admin('UpsertProjectSetting'), {
      customerId: w.customerId,
      projectId: w.projectId,
      settingName: 'rate-limit',
      settingValue: JSON.stringify({ tokensPerMinute: reserved + 50 }),
    });
    await recordOf(await abortedStream(PATH.chat, body));
    // The window still holds the aborted stream's reservation: the same request again does not fit.
    const again = await chat(tg.url, w.apiKey, { ...body, stream: false });
    expect(again.status).toBe(429);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
  } finally {
    oa.script(undefined);
    await tg.must(admin('DeleteProjectSetting'), { customerId: w.customerId, projectId: w.projectId, settingName: 'rate-limit' });
  }
}, 90_000);

test('CJK input: 10 concurrent requests of 40,000 characters against a $100,000 budget spend at most the limit + one request', async () => {
  const x = await meteredWorld(tg, oa.url, an.url, 'cjk', { prices: { input: 1_000_000, output: 1_000_000 }, suffix: '-cjk' });
  await tg.must(admin('UpsertBudget'), {
    customerId: x.customerId,
    projectId: x.projectId,
    name: 'cjk',
    limitUsd: '100000',
    period: 'total',
  });
  // The upstream counts one token per character of the messages' text (as tokenizers do for CJK).
  const perChar = (r: Recorded): number =>
    ((r.body.messages as { content: string }[] | undefined) ?? []).reduce((n, m) => n + m.content.length, 0);
  oa.script((r) => ({ text: 'ok', usage: { input: perChar(r), output: 10 }, delayMs: 200 }));
  try {
    const text = '预算'.repeat(20_000);
    const res = await Promise.all(
      Array.from({ length: 10 }, () =>
        chat(tg.url, x.apiKey, { model: 'metered-cjk', max_tokens: 10, messages: [{ role: 'user', content: text }] }),
      ),
    );
    const admitted = res.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(res.filter((r) => r.status === 429)).toHaveLength(10 - admitted);
    const oneRequest = (40_000 + 10) * 1e6 * 1000;
    const spent = await spentNano(x.customerId, 'cjk');
    expect(spent).toBe(admitted * oneRequest);
    expect(spent).toBeLessThanOrEqual(100_000 * 1e9 + oneRequest);
  } finally {
    oa.script(undefined);
  }
}, 60_000);
