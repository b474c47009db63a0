import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, test } from 'bun:test';
import OpenAI from 'openai';
import type { TestGateway } from './support/gateway.ts';
import type { MockUpstream, Scripted } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Same format in, same format out (issue 12): a Chat Completions client on an OpenAI upstream and a
 * Messages client on an Anthropic upstream are passed through (the client's JSON with the model
 * spliced in); the other pairs are translated. Both paths must look the same to the client: text,
 * usage, finish reasons, tool calls and errors. Unknown fields reach the upstream (lossless).
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, an } = world);
  openai = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: world.p.apiKey, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: tg.url, apiKey: world.p.apiKey, maxRetries: 0 });
}, 60_000);

afterAll(() => stopWorld(world));

const both = (s: Scripted) => {
  oa.script(() => s);
  an.script(() => s);
};

const TEXT: Scripted = { text: 'The same answer either way.', usage: { input: 21, output: 9 } };
const TOOL: Scripted = { toolCall: { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }, usage: { input: 30, output: 12 } };

const chatOnce = async (model: string, stream: boolean) => {
  const params = {
    model,
    messages: [{ role: 'user' as const, content: 'hi' }],
    tools: [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }],
  };
  if (!stream) {
    const r = await openai.chat.completions.create(params);
    const c = r.choices[0];
    return {
      model: r.model,
      text: c?.message.content ?? '',
      finish: c?.finish_reason,
      tools: (c?.message.tool_calls ?? []).map((t) => (t.type === 'function' ? [t.function.name, t.function.arguments] : [])),
      usage: [r.usage?.prompt_tokens, r.usage?.completion_tokens],
    };
  }
  const s = await openai.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finish: string | null | undefined;
  let usage: (number | undefined)[] = [];
  let m = '';
  const tools = new Map<number, [string, string]>();
  for await (const ch of s) {
    m = ch.model;
    const c = ch.choices[0];
    text += c?.delta.content ?? '';
    if (c?.finish_reason) finish = c.finish_reason;
    for (const t of c?.delta.tool_calls ?? []) {
      const cur = tools.get(t.index) ?? ['', ''];
      tools.set(t.index, [cur[0] + (t.function?.name ?? ''), cur[1] + (t.function?.arguments ?? '')]);
    }
    if (ch.usage) usage = [ch.usage.prompt_tokens, ch.usage.completion_tokens];
  }
  return { model: m, text, finish, tools: [...tools.values()], usage };
};

const messagesOnce = async (model: string, stream: boolean) => {
  const params = {
    model,
    max_tokens: 100,
    messages: [{ role: 'user' as const, content: 'hi' }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object' as const } }],
  };
  const r = stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
  const text = r.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const tools = r.content.flatMap((b) => (b.type === 'tool_use' ? [[b.name, JSON.stringify(b.input)]] : []));
  return { model: r.model, text, finish: r.stop_reason, tools, usage: [r.usage.input_tokens, r.usage.output_tokens] };
};

for (const stream of [false, true]) {
  for (const [name, script] of [
    ['text', TEXT],
    ['tool call', TOOL],
  ] as const) {
    test(`chat ${stream ? 'stream' : 'JSON'}, ${name}: passed through to OpenAI = translated to Anthropic`, async () => {
      both(script);
      const passed = await chatOnce('gpt-mini', stream);
      const translated = await chatOnce('claude-mini', stream);
      expect(passed.model).toBe('gpt-mini');
      expect(translated.model).toBe('claude-mini');
      expect({ ...passed, model: '' }).toEqual({ ...translated, model: '' });
      expect(passed.usage).toEqual([script.usage?.input, script.usage?.output]);
    });
    test(`messages ${stream ? 'stream' : 'JSON'}, ${name}: passed through to Anthropic = translated to OpenAI`, async () => {
      both(script);
      const passed = await messagesOnce('claude-mini', stream);
      const translated = await messagesOnce('gpt-mini', stream);
      expect(passed.model).toBe('claude-mini');
      expect(translated.model).toBe('gpt-mini');
      expect({ ...passed, model: '' }).toEqual({ ...translated, model: '' });
    });
  }
}

test('a chat stream without include_usage gets no usage chunk on either path', async () => {
  both(TEXT);
  for (const model of ['gpt-mini', 'claude-mini']) {
    const res = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world?.p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = await res.text();
    expect(body).not.toContain('"prompt_tokens"');
    expect(body).toContain('way.');
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(body).not.toContain('gpt-4o-mini');
  }
});

test('upstream errors look the same on both paths (status, type) and carry no upstream secret', async () => {
  both({
    status: 400,
    errorBody: JSON.stringify({ error: { message: 'bad thing sk-upstream-openai-secret', type: 'invalid_request_error' }, type: 'error' }),
  });
  const err = async (model: string) => {
    try {
      await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    } catch (e) {
      const a = e as { status?: number; type?: string; message?: string };
      return { status: a.status, type: a.type, secret: String(a.message).includes('sk-upstream') };
    }
    throw new Error('expected an error');
  };
  expect(await err('gpt-mini')).toEqual(await err('claude-mini'));
  expect((await err('gpt-mini')).secret).toBe(false);
});

test('fidelity, chat → OpenAI: every documented field and unknown ones arrive as sent, apart from model', async () => {
  oa.script(() => TEXT);
  const body = {
    model: 'gpt-mini',
    messages: [
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ],
    max_tokens: 50,
    temperature: 0.5,
    top_p: 0.9,
    n: 1,
    stop: ['END'],
    presence_penalty: 0.1,
    frequency_penalty: 0.2,
    logit_bias: { '50256': -100 },
    user: 'u-1',
    seed: 7,
    tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} }, strict: false } }],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    response_format: { type: 'json_object' },
    logprobs: false,
    metadata: { team: 'a' },
    store: false,
    service_tier: 'auto',
    reasoning_effort: 'low',
    x_vendor_extension: { keep: ['me', 1, null] },
  };
  const res = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world?.p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const got = oa.requests.at(-1)?.body;
  expect(got).toEqual({ ...body, model: 'gpt-4o-mini' });
});

test('fidelity, messages → Anthropic: every documented field and unknown ones arrive as sent, apart from model', async () => {
  an.script(() => TEXT);
  const body = {
    model: 'claude-mini',
    max_tokens: 64,
    system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
    ],
    temperature: 0.4,
    top_p: 0.9,
    top_k: 5,
    stop_sequences: ['END'],
    tools: [{ name: 'f', description: 'd', input_schema: { type: 'object', properties: {} } }],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    metadata: { user_id: 'u-1' },
    thinking: { type: 'disabled' },
    service_tier: 'auto',
    x_vendor_extension: { keep: ['me', 1, null] },
  };
  const res = await fetch(`${tg.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': world?.p.apiKey ?? '', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const got = an.requests.at(-1)?.body;
  expect(got).toEqual({ ...body, model: 'claude-haiku-4-5' });
});

test('Messages server tools, documents and their blocks reach Anthropic as sent; a translated target refuses them clearly', async () => {
  an.script(() => TEXT);
  const body = {
    model: 'claude-mini',
    max_tokens: 64,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' }, citations: { enabled: true } },
          { type: 'text', text: 'summarise' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'news' } },
          { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
          { type: 'text', text: 'nothing found' },
        ],
      },
      { role: 'user', content: 'again' },
    ],
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
  };
  const send = (model: string) =>
    fetch(`${tg.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': world?.p.apiKey ?? '', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model }),
    });
  const res = await send('claude-mini');
  expect(res.status).toBe(200);
  expect(an.requests.at(-1)?.body).toEqual({ ...body, model: 'claude-haiku-4-5' });
  const before = oa.requests.length;
  const refused = await send('gpt-mini');
  expect(refused.status).toBe(400);
  const err = ((await refused.json()) as { error: { type: string; message: string } }).error;
  expect(err.type).toBe('invalid_request_error');
  expect(err.message).toContain('citations');
  expect(oa.requests.length).toBe(before);
});

test('Chat custom tools, allowed_tools and audio parts reach OpenAI as sent; a translated target refuses them clearly', async () => {
  oa.script(() => TEXT);
  const body = {
    model: 'gpt-mini',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'listen' },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        ],
      },
    ],
    tools: [
      { type: 'custom', custom: { name: 'grammar_tool', description: 'free text', format: { type: 'text' } } },
      { type: 'function', function: { name: 'f', parameters: { type: 'object' } } },
    ],
    tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'f' } }] } },
  };
  const send = (model: string) =>
    fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world?.p.apiKey ?? ''}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model }),
    });
  const res = await send('gpt-mini');
  expect(res.status).toBe(200);
  expect(oa.requests.at(-1)?.body).toEqual({ ...body, model: 'gpt-4o-mini' });
  const before = an.requests.length;
  const refused = await send('claude-mini');
  expect(refused.status).toBe(400);
  expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('messages.0.content.1.type');
  expect(an.requests.length).toBe(before);
});
