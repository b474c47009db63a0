import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Messages threads on an Anthropic upstream (issue 9): a streamed reply keeps its thinking blocks
 * with their signatures in the stored thread, so a `continue` with the tool result sends them back
 * (Anthropic refuses a tool-use turn without them when thinking is on); and each reply is continued
 * at most once (400 `thread_already_continued`, which the SDK recovers from by replaying).
 */

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(() => stopWorld(w));

const ev = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
const THINKING_STREAM = [
  ev({
    type: 'message_start',
    message: {
      id: 'msg_think1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-haiku-4-5',
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 1 },
    },
  }),
  ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants ' } }),
  ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'the weather.' } }),
  ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM-signed' } }),
  ev({ type: 'content_block_stop', index: 0 }),
  ev({ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgB-redacted' } }),
  ev({ type: 'content_block_stop', index: 1 }),
  ev({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } }),
  ev({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } }),
  ev({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } }),
  ev({ type: 'content_block_stop', index: 2 }),
  ev({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 30 } }),
  ev({ type: 'message_stop' }),
].join('');

const send = async (body: Record<string, unknown>) => {
  const res = await fetch(`${w.tg.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': w.p.apiKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-mini', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, ...body }),
  });
  return { res, text: await res.text() };
};

test('a streamed reply keeps its thinking blocks (with signatures) for the continue; a second continue is refused', async () => {
  w.an.script((r) => (r.body.stream === true ? { raw: THINKING_STREAM } : { text: 'tool said: sunny', usage: { input: 30, output: 5 } }));
  const tools = [{ name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
  const first = await send({ stream: true, thread: { type: 'create' }, tools, messages: [{ role: 'user', content: 'weather in Oslo?' }] });
  expect(first.res.status).toBe(200);
  expect(first.text).toContain('signature_delta');

  const cont = {
    thread: { type: 'continue', previous_message_id: 'msg_think1' },
    messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] }],
  };
  const second = await send(cont);
  expect(second.res.status).toBe(200);
  const sent = w.an.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
  expect(sent.messages[1]).toEqual({
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCgIYAhIM-signed' },
      { type: 'redacted_thinking', data: 'EmwKAhgB-redacted' },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } },
    ],
  });

  // The same reply continued again: Anthropic's 400, which the SDK maps to its own error class.
  const before = w.an.requests.length;
  const again = await send(cont);
  expect(again.res.status).toBe(400);
  const body = JSON.parse(again.text) as { type: string; error: { type: string; details: { error_code: string } } };
  expect(body.error.type).toBe('invalid_request_error');
  expect(body.error.details.error_code).toBe('thread_already_continued');
  expect(w.an.requests.length).toBe(before);
  const client = new Anthropic({ baseURL: w.tg.url, apiKey: w.p.apiKey, maxRetries: 0 });
  const err = await client.beta.messages
    .create({
      model: 'claude-mini',
      max_tokens: 100,
      thread: { type: 'continue', previous_message_id: 'msg_think1' },
      messages: [{ role: 'user', content: 'again' }],
    })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Anthropic.ThreadAlreadyContinuedError);
  w.an.script(undefined);
});

test('the thread SDK recovers from thread_already_continued by replaying the conversation', async () => {
  const client = new Anthropic({ baseURL: w.tg.url, apiKey: w.p.apiKey, maxRetries: 0 });
  const thread = client.beta.messages.thread({ model: 'claude-mini', max_tokens: 256 });
  const one = await thread.send({ role: 'user', content: 'turn one' });
  // Someone else continues from the same reply first.
  const other = await send({
    thread: { type: 'continue', previous_message_id: one.id },
    messages: [{ role: 'user', content: 'elsewhere' }],
  });
  expect(other.res.status).toBe(200);
  const two = await thread.send({ role: 'user', content: 'turn two' });
  expect(two.content[0]).toMatchObject({ type: 'text', text: 'anthropic says: turn two' });
  const sent = JSON.stringify(w.an.requests.at(-1)?.body);
  expect(sent).toContain('turn one');
  expect(sent).not.toContain('elsewhere');
});

test('one continue at a time: a concurrent one is thread_continue_in_flight; a failed continue leaves the reply open', async () => {
  const created = await send({ thread: { type: 'create' }, messages: [{ role: 'user', content: 'start' }] });
  const id = (JSON.parse(created.text) as { id: string }).id;
  const cont = (text: string) => ({ thread: { type: 'continue', previous_message_id: id }, messages: [{ role: 'user', content: text }] });

  w.an.script(() => ({
    status: 500,
    errorBody: JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } }),
  }));
  const failed = await send(cont('fails upstream'));
  expect(failed.res.status).toBeGreaterThanOrEqual(500);

  w.an.script(() => ({ text: 'slow answer', delayMs: 800, usage: { input: 5, output: 2 } }));
  const slow = send(cont('slow one'));
  await Bun.sleep(300);
  const racing = await send(cont('racing one'));
  expect(racing.res.status).toBe(400);
  expect((JSON.parse(racing.text) as { error: { details: { error_code: string } } }).error.details.error_code).toBe(
    'thread_continue_in_flight',
  );
  expect((await slow).res.status).toBe(200);
  w.an.script(undefined);

  const late = await send(cont('too late'));
  expect(late.res.status).toBe(400);
  expect((JSON.parse(late.text) as { error: { details: { error_code: string } } }).error.details.error_code).toBe(
    'thread_already_continued',
  );
});
