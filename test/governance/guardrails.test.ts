import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { requestRecords } from '../../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { meteredWorld, type World } from './support.ts';

/** Guardrails on every endpoint, streamed and not (contract §3.2). */
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let w: World;
const at = () => ({ customerId: w.customerId, projectId: w.projectId });

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url);
  await tg.must(admin('CreateGuardrail'), {
    ...at(),
    name: 'no-secrets',
    stage: 'both',
    kind: 'regex',
    pattern: 'TOPSECRET-\\d+',
    action: 'block',
  });
  await tg.must(admin('CreateGuardrail'), {
    ...at(),
    name: 'pii',
    stage: 'both',
    kind: 'pii',
    piiTypes: ['email', 'credit_card', 'iban'],
    action: 'redact',
  });
  await tg.must(admin('CreateGuardrail'), { ...at(), name: 'watch-ssn', stage: 'input', kind: 'pii', piiTypes: ['ssn'], action: 'flag' });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
});

const post = (path: string, body: Record<string, unknown>) =>
  fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

type Ep = {
  name: string;
  path: string;
  model: string;
  up: () => MockUpstream;
  body: (text: string, stream: boolean) => Record<string, unknown>;
};
const ENDPOINTS: Ep[] = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    model: 'metered',
    up: () => oa,
    body: (t, s) => ({ model: 'metered', stream: s, messages: [{ role: 'user', content: t }] }),
  },
  { name: 'responses', path: '/v1/responses', model: 'metered', up: () => oa, body: (t, s) => ({ model: 'metered', stream: s, input: t }) },
  {
    name: 'messages',
    path: '/v1/messages',
    model: 'claude-mini',
    up: () => an,
    body: (t, s) => ({ model: 'claude-mini', stream: s, max_tokens: 50, messages: [{ role: 'user', content: t }] }),
  },
];

describe.each(ENDPOINTS)('$name', (ep) => {
  for (const stream of [false, true]) {
    const mode = stream ? 'stream' : 'non-stream';
    test(`${mode}: a blocked input is 400 guardrail_blocked naming the guardrail, never the text, and never reaches the upstream`, async () => {
      const before = ep.up().requests.length;
      const r = await post(ep.path, ep.body('here is TOPSECRET-42 ok', stream));
      expect(r.status).toBe(400);
      const text = await r.text();
      expect(text).toContain('guardrail_blocked');
      expect(text).toContain('no-secrets');
      expect(text).not.toContain('TOPSECRET-42');
      expect(ep.up().requests.length).toBe(before);
    });

    test(`${mode}: input PII is redacted before the upstream sees it; output PII split across two upstream chunks is redacted`, async () => {
      ep.up().script(() => ({
        text: 'mail bob@example.com now',
        textChunks: ['mail bob@exa', 'mple.com now'],
        usage: { input: 5, output: 5 },
        chunkDelayMs: 20,
      }));
      const r = await post(ep.path, ep.body('card 4111 1111 1111 1111 and me@corp.io', stream));
      ep.up().script(undefined);
      expect(r.status).toBe(200);
      const sent = JSON.stringify(ep.up().requests.at(-1)?.body);
      expect(sent).toContain('[REDACTED:credit_card]');
      expect(sent).toContain('[REDACTED:email]');
      expect(sent).not.toContain('4111');
      expect(sent).not.toContain('me@corp.io');
      const out = await r.text();
      expect(out).not.toContain('bob@');
      expect(out).not.toContain('example.com');
      // Streams carry the text in deltas; the redaction marker arrives whole in one of them.
      expect(out).toContain('[REDACTED:email]');
    });

    test(`${mode}: blocked output is withheld (non-stream) or ends the stream with the format's error event`, async () => {
      ep.up().script(() => ({
        text: 'the code is TOPSECRET-7 and more',
        textChunks: ['the code is TOP', 'SECRET-7 and more'],
        usage: { input: 5, output: 5 },
      }));
      const r = await post(ep.path, ep.body('tell me', stream));
      ep.up().script(undefined);
      const out = await r.text();
      expect(out).toContain('guardrail_blocked');
      if (ep.name === 'messages' && stream) expect(out).toContain("blocked by the guardrail 'no-secrets'");
      expect(out).not.toContain('TOPSECRET-7');
      if (!stream) expect(r.status).toBe(400);
    });
  }
});

test('flag: the request is served and the guardrail is named on its record', async () => {
  const r = await post('/v1/chat/completions', { model: 'metered', messages: [{ role: 'user', content: 'my ssn is 123-45-6789' }] });
  expect(r.status).toBe(200);
  const id = r.headers.get('x-request-id') as string;
  await tg.gw.records.flush();
  const [row] = await tg.gw.store.db
    .select({ flags: requestRecords.guardrailFlags })
    .from(requestRecords)
    .where(eq(requestRecords.requestId, id));
  expect(row?.flags).toBe('watch-ssn');
});

test('extra endpoints: input guardrails apply (embeddings blocked, completions redacted)', async () => {
  const before = oa.requests.length;
  const blocked = await post('/v1/embeddings', { model: 'metered', input: ['TOPSECRET-1'] });
  expect(blocked.status).toBe(400);
  expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe('guardrail_blocked');
  expect(oa.requests.length).toBe(before);
  const ok = await post('/v1/completions', { model: 'metered', prompt: 'iban GB82 WEST 1234 5698 7654 32' });
  expect(ok.status).toBe(200);
  expect(JSON.stringify(oa.requests.at(-1)?.body)).toContain('[REDACTED:iban]');
});

test('max_input_tokens blocks large inputs; management validates kinds', async () => {
  await tg.must(admin('CreateGuardrail'), {
    ...at(),
    name: 'small',
    stage: 'input',
    kind: 'max_input_tokens',
    maxTokens: 10,
    action: 'block',
  });
  const r = await post('/v1/chat/completions', { model: 'metered', messages: [{ role: 'user', content: 'x'.repeat(100) }] });
  expect(r.status).toBe(400);
  expect(await r.text()).toContain("'small'");
  await tg.must(admin('DeleteGuardrail'), { ...at(), name: 'small' });
  const bad = await tg.call(admin('CreateGuardrail'), {
    ...at(),
    name: 'bad',
    stage: 'input',
    kind: 'regex',
    pattern: '(',
    action: 'block',
  });
  expect(bad.status).toBe(400);
  const dup = await tg.call(admin('CreateGuardrail'), {
    ...at(),
    name: 'pii',
    stage: 'input',
    kind: 'pii',
    piiTypes: ['email'],
    action: 'flag',
  });
  expect(dup.status).toBe(409);
  const upd = (await tg.must(admin('UpdateGuardrail'), { ...at(), name: 'watch-ssn', action: 'flag', piiTypes: ['ssn', 'phone'] })) as {
    guardrail: { piiTypes: string[] };
  };
  expect(upd.guardrail.piiTypes).toEqual(['ssn', 'phone']);
  const list = (await tg.must(admin('ListGuardrails'), at())) as { guardrails: { name: string }[] };
  expect(list.guardrails.map((g) => g.name)).toEqual(['no-secrets', 'pii', 'watch-ssn']);
  expect(((await tg.must(admin('GetGuardrail'), { ...at(), name: 'pii' })) as { guardrail: { kind: string } }).guardrail.kind).toBe('pii');
});

describe('evasions: guardrails match normalised text (contract §3.2)', () => {
  const chat = (messages: unknown[], stream = false) => ({ model: 'metered', stream, messages });
  const user = (content: unknown) => ({ role: 'user', content });
  const toolCall = (args: string) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: args } }],
  });
  const BLOCKED: [string, string, Record<string, unknown>][] = [
    ['zero-width characters', '/v1/chat/completions', chat([user('here is TOP\u200bSECRET\u200d-42 ok')])],
    ['a soft hyphen', '/v1/chat/completions', chat([user('here is TOPSE\u00adCRET-42 ok')])],
    ['fullwidth letters', '/v1/chat/completions', chat([user('here is ＴＯＰＳＥＣＲＥＴ－４２ ok')])],
    ['a Cyrillic look-alike', '/v1/chat/completions', chat([user('here is TOPS\u0415CRET-42 ok')])],
    [
      'two content parts',
      '/v1/chat/completions',
      chat([
        user([
          { type: 'text', text: 'here is TOPSEC' },
          { type: 'text', text: 'RET-42 ok' },
        ]),
      ]),
    ],
    ['two messages', '/v1/chat/completions', chat([user('here is TOPSEC'), user('RET-42 ok')])],
    ['base64', '/v1/chat/completions', chat([user('decode VE9QU0VDUkVULTQy please')])],
    ['system text', '/v1/chat/completions', chat([{ role: 'system', content: 'TOPSECRET-42' }, user('hi')])],
    ['developer text', '/v1/chat/completions', chat([{ role: 'developer', content: 'TOPSECRET-42' }, user('hi')])],
    [
      'tool arguments',
      '/v1/chat/completions',
      chat([user('hi'), toolCall('{"q":"TOPSECRET-42"}'), { role: 'tool', tool_call_id: 'call_1', content: 'ok' }]),
    ],
    [
      'a tool result',
      '/v1/chat/completions',
      chat([user('hi'), toolCall('{}'), { role: 'tool', tool_call_id: 'call_1', content: 'TOPSECRET-42' }]),
    ],
    [
      'Messages system blocks',
      '/v1/messages',
      {
        model: 'claude-mini',
        max_tokens: 50,
        system: [
          { type: 'text', text: 'TOPSEC' },
          { type: 'text', text: 'RET-42' },
        ],
        messages: [user('hi')],
      },
    ],
    [
      'a Messages tool_use input and tool_result',
      '/v1/messages',
      {
        model: 'claude-mini',
        max_tokens: 50,
        messages: [
          user('hi'),
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'ТОР' } }] },
          user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'SECRET-42' }]),
        ],
      },
    ],
    [
      'a Responses function_call_output',
      '/v1/responses',
      {
        model: 'metered',
        input: [
          { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'TOPSECRET-42' },
        ],
      },
    ],
  ];
  test.each(BLOCKED)('blocked through %s', async (_what, path, body) => {
    const up = path === '/v1/messages' ? an : oa;
    const before = up.requests.length;
    const r = await post(path, body);
    const text = await r.text();
    expect(r.status).toBe(400);
    expect(text).toContain('guardrail_blocked');
    expect(text).toContain("'no-secrets'");
    expect(text).not.toContain('SECRET-42');
    expect(text).not.toContain('SECRET\u200d-42');
    expect(up.requests.length).toBe(before);
  });

  const REDACTED: [string, unknown[], string[], string[]][] = [
    ['a dotted card number', [user('card 4111.1111.1111.1111 thanks')], ['card [REDACTED:credit_card] thanks'], ['4111']],
    [
      'a card with zero-width characters and a soft hyphen',
      [user('card 4111\u200b 1111 11\u00ad11 1111!')],
      ['card [REDACTED:credit_card]!'],
      ['4111', '\u200b'],
    ],
    ['a fullwidth email', [user('mail ｍｅ@ｃｏｒｐ.ｉｏ now')], ['mail [REDACTED:email] now'], ['ｃｏｒｐ']],
    ['an email with a Cyrillic look-alike', [user('mail m\u0435@c\u043erp.io now')], ['mail [REDACTED:email] now'], ['rp.io']],
    ['a base64 email', [user('mail bWVAY29ycC5pbw== now')], ['mail [REDACTED:email] now'], ['bWVAY29ycC5pbw']],
    [
      'a card split across two messages',
      [user('card 4111 1111'), user(' 1111 1111 end')],
      ['card [REDACTED:credit_card]', '[REDACTED:credit_card] end'],
      ['4111', '1111'],
    ],
    [
      'a dashed IBAN in a tool result',
      [user('hi'), toolCall('{}'), { role: 'tool', tool_call_id: 'call_1', content: 'iban GB82-WEST-1234-5698-7654-32.' }],
      ['hi', '{}', 'iban [REDACTED:iban].'],
      ['WEST'],
    ],
  ];
  test.each(REDACTED)('redacted at the original span: %s', async (_what, messages, expected, gone) => {
    const r = await post('/v1/chat/completions', chat(messages));
    expect(r.status).toBe(200);
    const sent = oa.requests.at(-1)?.body as { messages: { content: unknown; tool_calls?: { function: { arguments: string } }[] }[] };
    const texts = sent.messages.map((m) => (typeof m.content === 'string' ? m.content : (m.tool_calls?.[0]?.function.arguments ?? '')));
    expect(texts).toEqual(expected);
    for (const g of gone) expect(JSON.stringify(sent)).not.toContain(g);
  });

  test('output: a streamed secret with zero-width characters split across chunks ends the stream', async () => {
    oa.script(() => ({
      text: 'the code is TOP\u200bSECRET-7 ok',
      textChunks: ['the code is TOP\u200b', 'SEC\u200bRET-7 ok'],
      usage: { input: 5, output: 5 },
    }));
    const r = await post('/v1/chat/completions', chat([user('tell me')], true));
    oa.script(undefined);
    const out = await r.text();
    expect(out).toContain('guardrail_blocked');
    expect(out).not.toContain('RET-7');
  });

  test.each([
    ['chat', '/v1/chat/completions'],
    ['messages', '/v1/messages'],
  ])('output (%s): streamed tool-call arguments split across deltas are scanned as one text', async (name, path) => {
    const up = name === 'messages' ? an : oa;
    up.script(() => ({ toolCall: { id: 'call_9', name: 'lookup', arguments: '{"code":"TOPSECRET-9"}' }, usage: { input: 5, output: 5 } }));
    const body =
      name === 'messages'
        ? { model: 'claude-mini', max_tokens: 50, stream: true, messages: [user('call it')] }
        : chat([user('call it')], true);
    const r = await post(path, body);
    up.script(undefined);
    const out = await r.text();
    expect(out).toContain(name === 'messages' ? "blocked by the guardrail 'no-secrets'" : 'guardrail_blocked');
    expect(out).not.toContain('SECRET-9');
  });

  test('output: streamed tool-call arguments with a redacted match arrive whole, redacted', async () => {
    oa.script(() => ({ toolCall: { id: 'call_8', name: 'mail', arguments: '{"to":"bob@example.com"}' }, usage: { input: 5, output: 5 } }));
    const r = await post('/v1/chat/completions', chat([user('mail it')], true));
    oa.script(undefined);
    let args = '';
    for (const line of (await r.text()).split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const chunk = JSON.parse(line.slice(6)) as { choices: { delta: { tool_calls?: { function?: { arguments?: string } }[] } }[] };
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    }
    expect(args).toBe('{"to":"[REDACTED:email]"}');
  });

  test('output: a look-alike email in a whole answer is redacted in place', async () => {
    oa.script(() => ({ text: 'mail b\u043eb@\u0435xample.com now', usage: { input: 5, output: 5 } }));
    const r = await post('/v1/chat/completions', chat([user('who')]));
    oa.script(undefined);
    const body = (await r.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe('mail [REDACTED:email] now');
  });
});
