import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createEventStreamParser } from '../src/providers/eventstream.ts';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream, Recorded, Scripted } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Contract §14, project setting `mid-stream-fallback`: an upstream stream cut after K chunks is
 * continued by the route's next target in the same client stream — in every client format, same
 * family and across families. The next upstream gets the text so far as an assistant prefix; the
 * client gets one valid stream ending normally; the record has both attempts and the summed usage
 * and cost. Off: the format's error event, as before. A tool call cut mid-way is not continued, and
 * an output guardrail still sees the join.
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let p: Provisioned;

/** Upstream models: `cut-*` streams "one two " and closes the connection; `cont-*` continues. */
const SCRIPTS: Record<string, Scripted> = {
  'cut-oa': { textChunks: ['one ', 'two ', 'three ', 'never'], cutAfter: 3, chunkDelayMs: 20, usage: { input: 10, output: 4 } },
  // message_start (input 10), ping, content_block_start, "one ", "two ", then the cut.
  'cut-an': { textChunks: ['one ', 'two ', 'three ', 'never'], cutAfter: 5, chunkDelayMs: 20, usage: { input: 10, output: 4 } },
  'cont-oa': { textChunks: ['three ', 'four.'], usage: { input: 20, output: 2 } },
  'cont-an': { textChunks: ['three ', 'four.'], usage: { input: 20, output: 2 } },
  // A continuation that writes again the space the prefix left out (as models do).
  'cont-sp': { textChunks: [' ', ' three ', 'four.'], usage: { input: 20, output: 2 } },
  // role chunk, the tool call's start, half of its arguments, then the cut.
  'cut-tool': { toolCall: { id: 'call_1', name: 'lookup', arguments: '{"city":"Paris"}' }, cutAfter: 3, chunkDelayMs: 20 },
  'cut-pine': { textChunks: ['I like ', 'pine'], cutAfter: 3, chunkDelayMs: 20, usage: { input: 10, output: 3 } },
  'cont-pine': { textChunks: ['apple ', 'pie.'], usage: { input: 20, output: 2 } },
};
const script = (r: Recorded): Scripted => SCRIPTS[String(r.body.model)] ?? { text: 'default', usage: { input: 1, output: 1 } };

const IN_PRICE = 1; // per million tokens
const OUT_PRICE = 2;

const routeOf = async (model: string, targets: [connection: string, upstream: string][]): Promise<void> => {
  const m = (await tg.must(admin('CreateModel'), {
    model,
    provider: 'openai',
    mode: 'chat',
    capabilities: ['chat', 'tools'],
    contextWindow: 128000,
    maxOutputTokens: 1000,
    inputPricePerMillion: IN_PRICE,
    outputPricePerMillion: OUT_PRICE,
  })) as { model: { id: string } };
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    model,
    targets: targets.map(([connection, upstream], priority) => ({ connection, model: upstream, priority })),
  });
};

const setting = (value: string) =>
  tg.must(admin('UpsertProjectSetting'), {
    customerId: 'acme',
    projectId: 'default',
    settingName: 'mid-stream-fallback',
    settingValue: value,
  });

beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, an, p } = world);
  oa.script(script);
  an.script(script);
  // Breakers would bench the cut targets after a few tests (they are test/circuit-breaker.test.ts's).
  await tg.must(admin('UpsertProjectSetting'), {
    customerId: 'acme',
    projectId: 'default',
    settingName: 'circuit-breaker',
    settingValue: '{"failures": 0}',
  });
  await setting('true');
  await routeOf('msf-chat', [
    ['mock-openai', 'cut-oa'],
    ['mock-anthropic', 'cont-an'],
  ]);
  await routeOf('msf-space', [
    ['mock-openai', 'cut-oa'],
    ['mock-openai', 'cont-sp'],
  ]);
  await routeOf('msf-messages', [
    ['mock-anthropic', 'cut-an'],
    ['mock-anthropic', 'cont-an'],
  ]);
  await routeOf('msf-responses', [
    ['mock-openai', 'cut-oa'],
    ['mock-openai', 'cont-oa'],
  ]);
  await routeOf('msf-gemini', [
    ['mock-anthropic', 'cut-an'],
    ['mock-openai', 'cont-oa'],
  ]);
  await routeOf('msf-converse', [
    ['mock-openai', 'cut-oa'],
    ['mock-anthropic', 'cont-an'],
  ]);
  await routeOf('msf-cohere', [
    ['mock-anthropic', 'cut-an'],
    ['mock-anthropic', 'cont-an'],
  ]);
  await routeOf('msf-tool', [
    ['mock-openai', 'cut-tool'],
    ['mock-openai', 'cont-oa'],
  ]);
  await routeOf('msf-pine', [
    ['mock-openai', 'cut-pine'],
    ['mock-anthropic', 'cont-pine'],
  ]);
}, 60_000);

afterAll(() => stopWorld(world));

interface RecordView {
  attempts: number;
  connection: string;
  upstreamModel: string;
  errorCode?: string;
  usage: { promptTokens: number; completionTokens: number };
  cost: string;
  responseBody: { text?: string; finishReason?: string; attempts?: { upstreamModel: string; errorCode?: string }[] } | null;
}

const recordOf = async (clientId: string): Promise<RecordView> => {
  for (let i = 0; i < 100; i++) {
    await tg.gw.records.flush();
    const found = (await tg.must(admin('SearchRequestRecords'), { clientRequestId: clientId })) as { records: RecordView[] };
    if (found.records[0]) return found.records[0];
    await Bun.sleep(30);
  }
  throw new Error(`no record for ${clientId}`);
};

/** The last request a mock received for an upstream model. */
const lastTo = (m: MockUpstream, upstream: string): Recorded | undefined => m.requests.findLast((r) => r.body.model === upstream);

/**
 * The record of a continued stream: two attempts (the cut one marked with its break), the second
 * target's connection, and usage and cost the sum of both attempts'.
 */
const expectContinuedRecord = (rec: RecordView, cut: string, cont: string, contUsage: { input: number; output: number }) => {
  expect(rec.attempts).toBe(2);
  expect(rec.errorCode).toBeUndefined();
  expect(rec.upstreamModel).toBe(cont);
  const list = rec.responseBody?.attempts ?? [];
  expect(list.map((a) => a.upstreamModel)).toEqual([cut, cont]);
  expect(list[0]?.errorCode).toBeDefined();
  expect(list[1]?.errorCode).toBeUndefined();
  // The cut attempt streamed "one two " (8 characters: charged as 8 output tokens, one per character).
  expect(rec.usage.completionTokens).toBe(8 + contUsage.output);
  // Its input: reported by an Anthropic-family message_start (10), else the request's token bound.
  if (cut.endsWith('-an')) expect(rec.usage.promptTokens).toBe(10 + contUsage.input);
  else expect(rec.usage.promptTokens).toBeGreaterThan(contUsage.input);
  const nano = rec.usage.promptTokens * IN_PRICE * 1000 + rec.usage.completionTokens * OUT_PRICE * 1000;
  expect(Math.round(Number(rec.cost) * 1e9)).toBe(nano);
};

/** What the continuing upstream was sent as the last turn: the text so far as an assistant prefix. */
const expectPrefix = (m: MockUpstream, cont: string) => {
  const sent = lastTo(m, cont)?.body as { messages?: { role: string; content: unknown }[] } | undefined;
  const last = sent?.messages?.at(-1);
  expect(last?.role).toBe('assistant');
  expect(JSON.stringify(last?.content)).toContain('one two');
};

const sseData = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);

describe('mid-stream-fallback on: a stream cut after K chunks is continued by the next target', () => {
  test('Chat (openai SDK), OpenAI then Anthropic: one stream, one id, the prefix sent, both attempts recorded', async () => {
    const id = `msf-chat-${crypto.randomUUID()}`;
    const client = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0 });
    const stream = await client.chat.completions.create(
      { model: 'msf-chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'count' }] },
      { headers: { 'x-request-id': id } },
    );
    let text = '';
    const ids = new Set<string>();
    const finishes: string[] = [];
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const c of stream) {
      ids.add(c.id);
      text += c.choices[0]?.delta.content ?? '';
      if (c.choices[0]?.finish_reason) finishes.push(c.choices[0].finish_reason);
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('one two three four.');
    expect(ids.size).toBe(1);
    expect(finishes).toEqual(['stop']);
    expectPrefix(an, 'cont-an');
    const rec = await recordOf(id);
    expectContinuedRecord(rec, 'cut-oa', 'cont-an', { input: 20, output: 2 });
    // The client's usage chunk is the sum too.
    expect(usage?.completion_tokens).toBe(rec.usage.completionTokens);
    expect(usage?.prompt_tokens).toBe(rec.usage.promptTokens);
  });

  test('a continuation that writes again the whitespace the prefix left out joins with one space, not two', async () => {
    const client = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'msf-space',
      stream: true,
      messages: [{ role: 'user', content: 'count' }],
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('one two three four.');
    // The prefix sent: the text so far without its trailing space.
    const sent = lastTo(oa, 'cont-sp')?.body as { messages?: { role: string; content: unknown }[] } | undefined;
    expect(JSON.stringify(sent?.messages?.at(-1)?.content)).toContain('one two"');
  });

  test('Messages (@anthropic-ai/sdk), Anthropic then Anthropic: one message_start, one text block, the prefill sent', async () => {
    const id = `msf-messages-${crypto.randomUUID()}`;
    const client = new Anthropic({ baseURL: tg.url, apiKey: p.apiKey, maxRetries: 0 });
    const stream = client.messages.stream(
      { model: 'msf-messages', max_tokens: 200, messages: [{ role: 'user', content: 'count' }] },
      { headers: { 'x-request-id': id } },
    );
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const msg = await stream.finalMessage();
    expect(msg.content).toHaveLength(1);
    expect(msg.content[0]).toMatchObject({ type: 'text', text: 'one two three four.' });
    expect(msg.stop_reason).toBe('end_turn');
    expect(types.filter((t) => t === 'message_start')).toHaveLength(1);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(1);
    expect(types.at(-1)).toBe('message_stop');
    expectPrefix(an, 'cont-an');
    const rec = await recordOf(id);
    expectContinuedRecord(rec, 'cut-an', 'cont-an', { input: 20, output: 2 });
    expect(msg.usage.output_tokens).toBe(rec.usage.completionTokens);
  });

  test('Responses (openai SDK), OpenAI then OpenAI: one response, its text whole, completed', async () => {
    const id = `msf-responses-${crypto.randomUUID()}`;
    const client = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0 });
    const stream = client.responses.stream({ model: 'msf-responses', input: 'count' }, { headers: { 'x-request-id': id } });
    const created: string[] = [];
    stream.on('response.created', (e) => created.push(e.response.id));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('one two three four.');
    expect(final.status).toBe('completed');
    expect(created).toHaveLength(1);
    const sent = JSON.stringify(lastTo(oa, 'cont-oa')?.body);
    expect(sent).toContain('"role":"assistant"');
    expect(sent).toContain('one two');
    const rec = await recordOf(id);
    expectContinuedRecord(rec, 'cut-oa', 'cont-oa', { input: 20, output: 2 });
  });

  const post = (path: string, body: unknown, id: string) =>
    fetch(`${tg.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify(body),
    });

  test('Gemini (wire), Anthropic then OpenAI: the chunks join, the last has finishReason STOP and the summed usageMetadata', async () => {
    const id = `msf-gemini-${crypto.randomUUID()}`;
    const r = await post(
      '/v1beta/models/msf-gemini:streamGenerateContent?alt=sse',
      { contents: [{ role: 'user', parts: [{ text: 'count' }] }] },
      id,
    );
    expect(r.status).toBe(200);
    type Chunk = {
      candidates?: { content?: { parts?: { text?: string }[] }; finishReason?: string }[];
      usageMetadata?: { candidatesTokenCount: number };
    };
    const chunks = sseData(await r.text()) as Chunk[];
    expect(chunks.some((c) => 'error' in c)).toBe(false);
    const text = chunks.map((c) => (c.candidates?.[0]?.content?.parts ?? []).map((x) => x.text ?? '').join('')).join('');
    expect(text).toBe('one two three four.');
    expect(chunks.filter((c) => c.candidates?.[0]?.finishReason).map((c) => c.candidates?.[0]?.finishReason)).toEqual(['STOP']);
    expectPrefix(oa, 'cont-oa');
    const rec = await recordOf(id);
    expectContinuedRecord(rec, 'cut-an', 'cont-oa', { input: 20, output: 2 });
    expect(chunks.at(-1)?.usageMetadata?.candidatesTokenCount).toBe(rec.usage.completionTokens);
  });

  test('Converse (event stream), OpenAI then Anthropic: deltas join, one messageStop, metadata with the sum', async () => {
    const id = `msf-converse-${crypto.randomUUID()}`;
    const r = await post('/model/msf-converse/converse-stream', { messages: [{ role: 'user', content: [{ text: 'count' }] }] }, id);
    expect(r.status).toBe(200);
    const frames = createEventStreamParser().push(new Uint8Array(await r.arrayBuffer()));
    expect(frames.some((f) => f.headers?.[':message-type'] === 'exception')).toBe(false);
    const events = frames.map((f) => ({ type: f.headers?.[':event-type'], data: JSON.parse(f.data) as Record<string, unknown> }));
    const text = events
      .filter((e) => e.type === 'contentBlockDelta')
      .map((e) => (e.data.delta as { text?: string }).text ?? '')
      .join('');
    expect(text).toBe('one two three four.');
    expect(events.filter((e) => e.type === 'messageStart')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'messageStop')).toHaveLength(1);
    expectPrefix(an, 'cont-an');
    const rec = await recordOf(id);
    expectContinuedRecord(rec, 'cut-oa', 'cont-an', { input: 20, output: 2 });
    const meta = events.find((e) => e.type === 'metadata')?.data as { usage: { outputTokens: number } } | undefined;
    expect(meta?.usage.outputTokens).toBe(rec.usage.completionTokens);
  });

  test('Cohere v2 (wire), Anthropic then Anthropic: one message-start, content continuous, message-end COMPLETE', async () => {
    const id = `msf-cohere-${crypto.randomUUID()}`;
    const r = await post('/v2/chat', { model: 'msf-cohere', stream: true, messages: [{ role: 'user', content: 'count' }] }, id);
    expect(r.status).toBe(200);
    const events = sseData(await r.text()) as { type: string; index?: number; delta?: { message?: { content?: { text?: string } } } }[];
    expect(events.filter((e) => e.type === 'message-start')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'content-start')).toHaveLength(1);
    const text = events
      .filter((e) => e.type === 'content-delta')
      .map((e) => e.delta?.message?.content?.text ?? '')
      .join('');
    expect(text).toBe('one two three four.');
    const end = events.at(-1);
    expect(end?.type).toBe('message-end');
    expect(JSON.stringify(end?.delta)).toContain('"finish_reason":"COMPLETE"');
    expectPrefix(an, 'cont-an');
    expectContinuedRecord(await recordOf(id), 'cut-an', 'cont-an', { input: 20, output: 2 });
  });

  test('a stream cut inside a tool call is not continued: the format error event, the next target never called', async () => {
    const id = `msf-tool-${crypto.randomUUID()}`;
    const before = oa.requests.filter((r) => r.body.model === 'cont-oa').length;
    const r = await post(
      '/v1/chat/completions',
      {
        model: 'msf-tool',
        stream: true,
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [
          { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
        ],
      },
      id,
    );
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain('"tool_calls"');
    expect(text).toContain('"error"');
    expect(text).not.toContain('[DONE]');
    expect(oa.requests.filter((x) => x.body.model === 'cont-oa').length).toBe(before);
    const rec = await recordOf(id);
    expect(rec.attempts).toBe(1);
    expect(rec.errorCode).toBeDefined();
  });
});

describe('mid-stream-fallback off, and with an output guardrail', () => {
  test('a value other than true or false is invalid_argument naming settingValue, and nothing changes', async () => {
    const r = await tg.call(admin('UpsertProjectSetting'), {
      customerId: 'acme',
      projectId: 'default',
      settingName: 'mid-stream-fallback',
      settingValue: '"yes"',
    });
    expect(r.status).toBe(400);
    const body = r.body as { code: string; message: string };
    expect(body.code).toBe('invalid_argument');
    expect(body.message).toContain('settingValue');
    const now = (await tg.must(admin('GetProjectSettings'), { customerId: 'acme', projectId: 'default' })) as {
      settings: { settingName: string; settingValue: string }[];
    };
    expect(now.settings.find((s) => s.settingName === 'mid-stream-fallback')?.settingValue).toBe('true');
  });

  test('off (false): Chat and Messages get their error event after the first part, and the next target is not called', async () => {
    await setting('false');
    try {
      const contBefore = an.requests.filter((r) => r.body.model === 'cont-an').length;
      const chat = await fetch(`${tg.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'msf-chat', stream: true, messages: [{ role: 'user', content: 'count' }] }),
      });
      const chatText = await chat.text();
      expect(chatText).toContain('"content":"one "');
      expect(chatText).toContain('"error"');
      expect(chatText).not.toContain('[DONE]');
      const messages = await fetch(`${tg.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': p.apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'msf-messages', stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'count' }] }),
      });
      const messagesText = await messages.text();
      expect(messagesText).toContain('"text":"two "');
      expect(messagesText).toContain('event: error');
      expect(messagesText).not.toContain('message_stop');
      expect(an.requests.filter((r) => r.body.model === 'cont-an').length).toBe(contBefore);
    } finally {
      await setting('true');
    }
  });

  test('an output guardrail blocks a word that only appears across the join ("pine" + "apple")', async () => {
    await tg.must(admin('CreateGuardrail'), {
      customerId: 'acme',
      projectId: 'default',
      name: 'no-pineapple',
      stage: 'output',
      kind: 'regex',
      pattern: 'pineapple',
      action: 'block',
    });
    const id = `msf-pine-${crypto.randomUUID()}`;
    const r = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model: 'msf-pine', stream: true, messages: [{ role: 'user', content: 'fruit?' }] }),
    });
    const text = await r.text();
    // The continuation was asked for (the join is only visible once it streams) and the guardrail ended the stream.
    expect(JSON.stringify(lastTo(an, 'cont-pine')?.body.messages)).toContain('I like pine');
    expect(text).toContain('"error"');
    expect(text).toContain('no-pineapple');
    expect(text).not.toContain('[DONE]');
    const streamed = sseData(text)
      .map((c) => (c.choices as { delta?: { content?: string } }[] | undefined)?.[0]?.delta?.content ?? '')
      .join('');
    expect(streamed).not.toContain('pineapple');
    const rec = await recordOf(id);
    expect(rec.attempts).toBe(2);
    expect(rec.errorCode).toBeDefined();
  });
});
