import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * A stream relayed in the client's own format is recorded as the client got it (its events, not a
 * summary of them) and SearchRequestRecords returns the answer assembled from it: lossless, with
 * tool calls, thinking and usage, through the real SDKs and the record writer.
 */

let tg: TestGateway;
let p: Provisioned;
let world: World | undefined;
beforeAll(async () => {
  world = await startWorld();
  ({ tg, p } = world);
}, 60_000);
afterAll(() => stopWorld(world));

interface RecordView {
  stream: boolean;
  httpStatus: number;
  errorCode?: string;
  usage: { promptTokens: number; completionTokens: number };
  responseBody: unknown;
  responseStream?: string;
}

const recordOf = async (clientRequestId: string): Promise<RecordView> => {
  for (let i = 0; i < 100; i++) {
    await tg.gw.records.flush();
    const { records } = (await tg.must(admin('SearchRequestRecords'), { clientRequestId })) as { records: RecordView[] };
    if (records[0]) return records[0];
    await Bun.sleep(20);
  }
  throw new Error(`no record for ${clientRequestId}`);
};

const openai = (id: string) => new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0, defaultHeaders: { 'x-client-request-id': id } });
const anthropic = (id: string) => new Anthropic({ baseURL: tg.url, apiKey: p.apiKey, maxRetries: 0, defaultHeaders: { 'x-client-request-id': id } });

test('a relayed Chat Completions stream: the record holds the events the client got and reads back as the chat.completion', async () => {
  world?.oa.script(() => ({ textChunks: ['Stored ', 'as ', 'streamed.'], usage: { input: 11, output: 3 } }));
  const stream = await openai('rec-chat').chat.completions.create({ model: 'gpt-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  expect(text).toBe('Stored as streamed.');
  const r = await recordOf('rec-chat');
  expect(r).toMatchObject({ stream: true, httpStatus: 200, usage: { promptTokens: 11, completionTokens: 3 } });
  expect(r.responseBody).toMatchObject({ object: 'chat.completion', model: 'gpt-mini', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] });
  // What the client got: the public model, no usage chunk (it did not ask for one), [DONE].
  expect(r.responseStream).toContain('"model":"gpt-mini"');
  expect(r.responseStream).not.toContain('gpt-4o-mini');
  expect(r.responseStream).not.toContain('"prompt_tokens"');
  expect(r.responseStream?.endsWith('data: [DONE]\n\n')).toBe(true);
  world?.oa.script(undefined);
});

test('a relayed stream with a tool call reads back with the call assembled from its pieces', async () => {
  const stream = await openai('rec-tool').chat.completions.create({
    model: 'gpt-mini',
    stream: true,
    stream_options: { include_usage: true },
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    messages: [{ role: 'user', content: 'call lookup {"q":"weather"}' }],
  });
  for await (const _ of stream) void _;
  const r = await recordOf('rec-tool');
  expect(r.responseBody).toMatchObject({
    choices: [{ message: { tool_calls: [{ id: 'call_abc123', type: 'function', function: { name: 'lookup', arguments: '{"q":"weather"}' } }] }, finish_reason: 'tool_calls' }],
    usage: { prompt_tokens: 20, completion_tokens: 9 },
  });
});

test('a relayed Messages stream reads back as its message, tool use input parsed, final usage', async () => {
  const stream = anthropic('rec-messages').messages.stream({
    model: 'claude-mini',
    max_tokens: 100,
    tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
    messages: [{ role: 'user', content: 'call lookup {"q":"tides"}' }],
  });
  const final = await stream.finalMessage();
  const r = await recordOf('rec-messages');
  expect(r.responseBody).toMatchObject({
    type: 'message',
    model: 'claude-mini',
    stop_reason: 'tool_use',
    content: [{ type: 'tool_use', id: final.content.find((b) => b.type === 'tool_use')?.id ?? '', name: 'lookup', input: { q: 'tides' } }],
    usage: { output_tokens: final.usage.output_tokens },
  });
  expect(r.responseStream).toContain('event: message_start');
});

test('a relayed stream that ends with an upstream error keeps the error and what was streamed before it', async () => {
  world?.oa.script(() => ({ textChunks: ['partial ', 'answer ', 'here'], midStreamError: true, chunkDelayMs: 20, usage: { input: 5, output: 3 } }));
  const stream = await openai('rec-broken').chat.completions.create({ model: 'gpt-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  let got = '';
  await expect(
    (async () => {
      for await (const c of stream) got += c.choices[0]?.delta.content ?? '';
    })(),
  ).rejects.toThrow();
  const r = await recordOf('rec-broken');
  expect(r.errorCode).toBeDefined();
  expect(r.responseBody).toMatchObject({ error: { code: r.errorCode }, partial: { object: 'chat.completion', choices: [{ message: { content: got } }] } });
  expect(got.length).toBeGreaterThan(0);
  // Charged for what was streamed: one token per character at least, never 0.
  expect(r.usage.completionTokens).toBeGreaterThanOrEqual(got.length);
  expect(JSON.stringify(r)).not.toContain('sk-upstream-openai-secret');
  world?.oa.script(undefined);
});

test('a relayed Messages stream the upstream cuts is charged the characters streamed, counted from the relayed events', async () => {
  // message_start, ping, content_block_start, two text deltas, then the connection closes.
  world?.an.script(() => ({ textChunks: ['partial ', 'answer ', 'here'], cutAfter: 5, chunkDelayMs: 20, usage: { input: 5, output: 3 } }));
  const stream = anthropic('rec-broken-messages').messages.stream({ model: 'claude-mini', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
  let got = '';
  stream.on('text', (t) => {
    got += t;
  });
  await expect(stream.finalMessage()).rejects.toThrow();
  const r = await recordOf('rec-broken-messages');
  expect(got).toBe('partial answer ');
  // message_start reported 5 in, 1 out; the output is raised to the 15 characters streamed.
  expect(r.usage).toMatchObject({ promptTokens: 5, completionTokens: got.length });
  expect(r.responseBody).toMatchObject({ error: {}, partial: { type: 'message', content: [{ type: 'text', text: got }] } });
  world?.an.script(undefined);
});
