import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { makePdf } from '../support/pdf.ts';
import { meteredWorld, type World } from './support.ts';

/**
 * Input guardrails read every text the upstream will read (issue 38, item 2): Messages `document`
 * blocks (text, base64 text/plain, content and PDF sources), Chat `file` parts and Responses
 * `input_file` parts with text data, tool results and tool-call input in all three formats — on a
 * route to an OpenAI upstream and to an Anthropic one. A block rule refuses before anything is
 * sent; a redact rule redacts what the upstream receives (inside base64: re-encoded; inside a PDF:
 * refused, the gateway cannot rewrite one); `documents: "refuse"` refuses what cannot be read.
 */

let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let w: World;
const at = () => ({ customerId: w.customerId, projectId: w.projectId });

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url, 'docs');
  await tg.must(admin('CreateGuardrail'), {
    ...at(),
    name: 'no-secrets',
    stage: 'input',
    kind: 'regex',
    pattern: 'TOPSECRET-\\d+|password',
    action: 'block',
  });
  await tg.must(admin('CreateGuardrail'), {
    ...at(),
    name: 'pii',
    stage: 'input',
    kind: 'pii',
    piiTypes: ['email', 'credit_card'],
    action: 'redact',
  });
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

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');

/** Everything an upstream received as text: strings, base64 text documents and data URLs decoded. */
const received = (up: MockUpstream): string => {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      out.push(v);
      const m = /^data:text\/[\w.+-]+;base64,(.*)$/s.exec(v);
      if (m) out.push(Buffer.from(m[1] as string, 'base64').toString('utf8'));
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (o.type === 'base64' && o.media_type === 'text/plain' && typeof o.data === 'string')
        out.push(Buffer.from(o.data, 'base64').toString('utf8'));
      Object.values(o).forEach(walk);
    }
  };
  walk(up.requests.at(-1)?.body);
  return out.join('\n');
};

const expectBlocked = async (r: Response, up: MockUpstream, before: number, guardrail = 'no-secrets'): Promise<void> => {
  const text = await r.text();
  expect(r.status).toBe(400);
  expect(text).toContain('guardrail_blocked');
  expect(text).toContain(`'${guardrail}'`);
  expect(text).not.toContain('TOPSECRET');
  expect(up.requests.length).toBe(before);
};

const messages = (model: string, content: unknown[]) => ({ model, max_tokens: 50, messages: [{ role: 'user', content }] });
const doc = (source: Record<string, unknown>) => ({ type: 'document', source });
const pdf = (text: string, flate: boolean) =>
  b64(
    makePdf(`BT /F1 12 Tf 72 700 Td (${text.slice(0, 8)}) Tj 0 -14 Td [(${text.slice(8, 14)}) -20 (${text.slice(14)})] TJ ET`, { flate }),
  );

const UPSTREAMS = [
  { name: 'to an OpenAI upstream', model: 'metered', up: () => oa },
  { name: 'to an Anthropic upstream', model: 'claude-mini', up: () => an },
];

const TEXT_KINDS: { name: string; block: (t: string) => unknown }[] = [
  { name: 'a text document', block: (t) => doc({ type: 'text', media_type: 'text/plain', data: t }) },
  { name: 'a base64 text/plain document', block: (t) => doc({ type: 'base64', media_type: 'text/plain', data: b64(t) }) },
  { name: 'a content-source document', block: (t) => doc({ type: 'content', content: [{ type: 'text', text: t }] }) },
];

describe.each(UPSTREAMS)('Messages documents $name', (u) => {
  for (const kind of TEXT_KINDS) {
    test(`${kind.name}: a block rule blocks and nothing is sent; a redact rule redacts what the upstream receives`, async () => {
      const before = u.up().requests.length;
      await expectBlocked(
        await post('/v1/messages', messages(u.model, [{ type: 'text', text: 'read this' }, kind.block('the code is TOPSECRET-42.')])),
        u.up(),
        before,
      );
      const r = await post(
        '/v1/messages',
        messages(u.model, [{ type: 'text', text: 'read this' }, kind.block('mail me@corp.io or card 4111/1111/1111/1111')]),
      );
      await r.text();
      // Toward OpenAI a content source has no translation (a 400 before the upstream): nothing leaks either way.
      if (u.model === 'metered' && kind.name.startsWith('a content')) {
        expect(r.status).toBe(400);
        expect(u.up().requests.length).toBe(before);
        return;
      }
      expect(u.up().requests.length).toBe(before + 1);
      const seen = received(u.up());
      expect(seen).toContain('mail [REDACTED:email] or card [REDACTED:credit_card]');
      expect(seen).not.toContain('me@corp.io');
      expect(JSON.stringify(u.up().requests.at(-1)?.body)).not.toContain(b64('mail me@corp.io'));
    });
  }

  for (const flate of [false, true]) {
    test(`a PDF (${flate ? 'Flate-compressed' : 'uncompressed'} content): a block rule blocks; a redact match refuses (a PDF cannot be rewritten); clean text passes`, async () => {
      const before = u.up().requests.length;
      const withPdf = (text: string) =>
        messages(u.model, [
          doc({ type: 'base64', media_type: 'application/pdf', data: pdf(text, flate) }),
          { type: 'text', text: 'summarise' },
        ]);
      await expectBlocked(await post('/v1/messages', withPdf('the codeTOPSECRET-42 end')), u.up(), before);
      await expectBlocked(await post('/v1/messages', withPdf('write tome@corp.io soon')), u.up(), before, 'pii');
      const ok = await post('/v1/messages', withPdf('a perfectly clean page'));
      expect(ok.status).toBe(200);
      expect(u.up().requests.length).toBe(before + 1);
    });
  }

  test('a document inside a tool result is read too', async () => {
    const before = u.up().requests.length;
    const body = (t: string) => ({
      model: u.model,
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'lookup', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [doc({ type: 'text', media_type: 'text/plain', data: t })] }],
        },
      ],
    });
    await expectBlocked(await post('/v1/messages', body('found TOPSECRET-7')), u.up(), before);
  });
});

describe('tool results and tool-call input, in every client format', () => {
  test('Chat Completions: a tool message is blocked and redacted', async () => {
    const body = (t: string) => ({
      model: 'metered',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: t },
      ],
    });
    const before = oa.requests.length;
    await expectBlocked(await post('/v1/chat/completions', body('result TOPSECRET-1')), oa, before);
    expect((await post('/v1/chat/completions', body('result me@corp.io'))).status).toBe(200);
    expect(received(oa)).toContain('result [REDACTED:email]');
  });

  test('Responses: function_call_output (a string and input_text parts) is blocked and redacted', async () => {
    const body = (output: unknown) => ({
      model: 'metered',
      input: [
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output },
      ],
    });
    const before = oa.requests.length;
    await expectBlocked(await post('/v1/responses', body('result TOPSECRET-1')), oa, before);
    await expectBlocked(await post('/v1/responses', body([{ type: 'input_text', text: 'result TOPSECRET-2' }])), oa, before);
    expect((await post('/v1/responses', body('result me@corp.io'))).status).toBe(200);
    expect(received(oa)).toContain('result [REDACTED:email]');
  });

  test.each(UPSTREAMS)('Messages $name: tool_result text is blocked and redacted; tool_use input under any key is read', async (u) => {
    const body = (result: string, input: Record<string, unknown> = {}) => ({
      model: u.model,
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'f', input }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: result }] },
      ],
    });
    const before = u.up().requests.length;
    await expectBlocked(await post('/v1/messages', body('result TOPSECRET-1')), u.up(), before);
    // `data`, `name`, `url` are structural elsewhere; inside tool input they are the model's arguments.
    await expectBlocked(await post('/v1/messages', body('ok', { data: 'TOPSECRET-3', name: 'x' })), u.up(), before);
    expect((await post('/v1/messages', body('result me@corp.io', { url: 'to bob@corp.io !' }))).status).toBe(200);
    const seen = received(u.up());
    expect(seen).toContain('result [REDACTED:email]');
    expect(seen).not.toContain('corp.io');
  });
});

describe('OpenAI file parts with text data', () => {
  const textUrl = (t: string) => `data:text/plain;base64,${b64(t)}`;

  test('Chat `file` part (toward Anthropic: a text part): blocked, and redacted', async () => {
    const body = (t: string) => ({
      model: 'claude-mini',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'read' },
            { type: 'file', file: { file_data: textUrl(t), filename: 'notes.txt' } },
          ],
        },
      ],
    });
    const before = an.requests.length;
    await expectBlocked(await post('/v1/chat/completions', body('TOPSECRET-9 inside')), an, before);
    expect((await post('/v1/chat/completions', body('write me@corp.io'))).status).toBe(200);
    expect(received(an)).toContain('write [REDACTED:email]');
    expect(received(an)).not.toContain('me@corp.io');
  });

  test.each(UPSTREAMS)('Responses `input_file` with file_data $name: blocked, and redacted (re-encoded in the data URL)', async (u) => {
    const body = (t: string) => ({
      model: u.model,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'read' },
            { type: 'input_file', filename: 'notes.txt', file_data: textUrl(t) },
          ],
        },
      ],
    });
    const before = u.up().requests.length;
    await expectBlocked(await post('/v1/responses', body('TOPSECRET-9 inside')), u.up(), before);
    await (await post('/v1/responses', body('write me@corp.io'))).text();
    expect(u.up().requests.length).toBe(before + 1);
    expect(received(u.up())).toContain('write [REDACTED:email]');
    expect(received(u.up())).not.toContain('me@corp.io');
  });
});

describe('evasions folded into normalisation', () => {
  test.each([
    ['a combining accent inside a word', 'my pas\u0301sword is x'],
    ['a precomposed accent', 'my paśsword is x'],
    ['a newline inside a word', 'the code TOP\nSECRET-42'],
    ['a CR LF inside a word', 'my pass\r\nword'],
    ['a line separator inside a word', 'my pass\u2028word'],
    ['Arabic-Indic digits', 'the code TOPSECRET-\u0664\u0662'],
    ['Extended Arabic-Indic digits', 'the code TOPSECRET-\u06f4\u06f2'],
  ])('%s is blocked', async (_, text) => {
    const before = oa.requests.length;
    await expectBlocked(await post('/v1/chat/completions', { model: 'metered', messages: [{ role: 'user', content: text }] }), oa, before);
  });

  test.each([
    ['separated by /', '4111/1111/1111/1111'],
    ['separated by _', '4111_1111_1111_1111'],
    ['in Arabic-Indic digits', '\u0664\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u0661\u0661\u0661\u0661'],
    [
      'in Extended Arabic-Indic digits',
      '\u06f4\u06f1\u06f1\u06f1-\u06f1\u06f1\u06f1\u06f1-\u06f1\u06f1\u06f1\u06f1-\u06f1\u06f1\u06f1\u06f1',
    ],
  ])('a card number %s is redacted in the original text', async (_, card) => {
    expect(
      (await post('/v1/chat/completions', { model: 'metered', messages: [{ role: 'user', content: `pay with ${card} today` }] })).status,
    ).toBe(200);
    expect(received(oa)).toContain('pay with [REDACTED:credit_card] today');
  });
});

describe('documents: "refuse"', () => {
  const withPdf = (model: string, data: string) =>
    messages(model, [doc({ type: 'base64', media_type: 'application/pdf', data }), { type: 'text', text: 'summarise' }]);
  const imageOnly = b64(makePdf('q 100 0 0 100 0 0 cm /Im1 Do Q', { flate: true }));
  const composite = b64(makePdf('BT /F1 12 Tf <00410042> Tj ET', { type0: true }));

  test.each(UPSTREAMS)('$name: a PDF without readable text passes under scan, is refused naming the guardrail under refuse', async (u) => {
    const before = u.up().requests.length;
    expect((await post('/v1/messages', withPdf(u.model, imageOnly))).status).toBe(200);
    expect(u.up().requests.length).toBe(before + 1);
    await tg.must(admin('CreateGuardrail'), {
      ...at(),
      name: 'docs-refuse',
      stage: 'input',
      kind: 'pii',
      piiTypes: ['ssn'],
      action: 'flag',
      documents: 'refuse',
    });
    try {
      const got = (await tg.must(admin('GetGuardrail'), { ...at(), name: 'docs-refuse' })) as { guardrail: { documents: string } };
      expect(got.guardrail.documents).toBe('refuse');
      await expectBlocked(await post('/v1/messages', withPdf(u.model, imageOnly)), u.up(), before + 1, 'docs-refuse');
      await expectBlocked(await post('/v1/messages', withPdf(u.model, composite)), u.up(), before + 1, 'docs-refuse');
      await expectBlocked(
        await post('/v1/messages', messages(u.model, [doc({ type: 'url', url: 'https://example.com/a.pdf' })])),
        u.up(),
        before + 1,
        'docs-refuse',
      );
      // A PDF whose text is read is scanned, not refused.
      expect((await post('/v1/messages', withPdf(u.model, pdf('a perfectly clean page', true)))).status).toBe(200);
      expect(u.up().requests.length).toBe(before + 2);
      await tg.must(admin('UpdateGuardrail'), { ...at(), name: 'docs-refuse', documents: 'scan' });
      expect((await post('/v1/messages', withPdf(u.model, imageOnly))).status).toBe(200);
    } finally {
      await tg.must(admin('DeleteGuardrail'), { ...at(), name: 'docs-refuse' });
    }
  });

  test('management: documents defaults to scan; refuse on an output-only guardrail is refused naming the field', async () => {
    const got = (await tg.must(admin('GetGuardrail'), { ...at(), name: 'pii' })) as { guardrail: { documents: string } };
    expect(got.guardrail.documents).toBe('scan');
    const bad = await tg.call(admin('CreateGuardrail'), {
      ...at(),
      name: 'out-refuse',
      stage: 'output',
      kind: 'pii',
      piiTypes: ['email'],
      action: 'block',
      documents: 'refuse',
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("'documents'");
    const wrong = await tg.call(admin('CreateGuardrail'), {
      ...at(),
      name: 'x-refuse',
      stage: 'input',
      kind: 'pii',
      piiTypes: ['email'],
      action: 'block',
      documents: 'maybe',
    });
    expect(wrong.status).toBe(400);
  });
});
