import { expect, spyOn, test } from 'bun:test';
import { learnDeltaTemplate, templateText } from '../src/providers/delta-template.ts';
import { createChatCompletionsStreamDecoder } from '../src/providers/openai-compatible/stream.ts';
import { mulberry32 } from './support/fuzz-bodies.ts';
import { chatAfter, chatStreamBothWays, type Outcome } from './support/decode-outcome.ts';

/**
 * OpenAI streams carry `obfuscation` (random characters, a different length per event) in every
 * delta chunk unless the client turns it off (`stream_options.include_obfuscation: false`). The
 * template keeps a second slot for it: the value is skipped, the text read as before. Whatever the
 * chunk, the result must be what decoding it in full gives: the same events, or the same failure.
 */

const head =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":';
const mid = '},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":';
const end = '}';
const role =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null,"obfuscation":"Xk"}';
const chunk = (token: string, pad: string): string => `${head}${token}${mid}${pad}${end}`;

const full = (data: string): Outcome => chatAfter([role], data);
/** A decoder that learnt its template from a chunk with another text and another padding. */
const templated = (data: string): Outcome => chatAfter([role, chunk('"x"', '"aBcD3"')], data);

test('a padded chunk teaches a template with a padding slot; the text is read whatever the padding', () => {
  const first = chunk('"x"', '"aBcD3"');
  const t = learnDeltaTemplate(first, JSON.parse(first) as Record<string, unknown>);
  expect(t).toEqual({ prefix: head, suffix: `${mid}"aBcD3"${end}`, pad: { head: mid, tail: end } });
  if (!t) return;
  expect(templateText(t, chunk('"Hello"', '""'))).toBe('Hello');
  expect(templateText(t, chunk('" wörld 👋"', '"q7TzLmNw0pY"'))).toBe(' wörld 👋');
  expect(templateText(t, chunk('"a\\"b\\\\c\\n"', '"Z"'))).toBe('a"b\\c\n');
  // Padding that is not a plain string, or bytes after it: not read here (the full path decides).
  for (const pad of ['"a\\"b"', '"a\\u0041"', '1', 'null', '"a', '"a"x']) expect(templateText(t, chunk('"Hello"', pad))).toBeUndefined();
  // A chunk without the padding member does not fit this template.
  expect(templateText(t, `${head}"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}`)).toBeUndefined();
});

test('fixed and adversarial chunks: the template path gives what the full path gives', () => {
  const tokens = [
    '"x"',
    '""',
    '"é ✓ 👋"',
    '"\\ud83d\\udc4b"',
    '"\\ud800"',
    '"a\\"b"',
    '"a\\\\"',
    '"raw\ttab"',
    '"a","x":"b"',
    '"abc\\"',
    '"abc',
    'abc"',
    '"a"b"',
    '"\\u00zz"',
    '"\\q"',
    'null',
    '1',
    '{"a":"b"}',
    '"a"  ',
  ];
  const pads = ['"Xk"', '""', '"0123456789abcdefghij"', '"a\\"b"', '"\\u0041"', '"a', '7', '"x","usage":{"prompt_tokens":1}'];
  for (const token of tokens) {
    for (const pad of pads) {
      const data = chunk(token, pad);
      expect({ token, pad, out: templated(data) }).toEqual({ token, pad, out: full(data) });
    }
  }
  // Chunks that only look alike: a finish reason, usage, bytes around the event, a second padding member.
  for (const data of [
    chunk('"x"', '"p"').replace('"finish_reason":null', '"finish_reason":"stop"'),
    chunk('"x"', '"p"').replace('"usage":null', '"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}'),
    `${chunk('"x"', '"p"')}x`,
    `x${chunk('"x"', '"p"')}`,
    chunk('"x"', '"p","obfuscation":"q"'),
  ]) {
    expect({ data, out: templated(data) }).toEqual({ data, out: full(data) });
  }
});

test('random texts and paddings: same events on both paths', () => {
  const rnd = mulberry32(21);
  const alphabet = ['a', 'é', '👋', '"', '\\', '\n', '\t', '\u0001', '\u2028', ' ', '/', '\ud800'];
  const padChars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < 400; i++) {
    let s = '';
    for (let j = Math.floor(rnd() * 12); j > 0; j--) s += alphabet[Math.floor(rnd() * alphabet.length)];
    let pad = '';
    for (let j = Math.floor(rnd() * 40); j > 0; j--) pad += padChars[Math.floor(rnd() * padChars.length)];
    const data = chunk(JSON.stringify(s), JSON.stringify(pad));
    const want = full(data);
    expect(templated(data)).toEqual(want);
    expect(want).toEqual({ events: s === '' ? [] : [{ type: 'text', text: s }] });
  }
});

test('a whole padded stream: same events as decoding every chunk in full', () => {
  const sent = ['He', 'llo', ' "wo\\nrld"', '', ' ✓'];
  const chunks = [
    role,
    ...sent.map((t, i) => chunk(JSON.stringify(t), JSON.stringify('p'.repeat(i * 3)))),
    chunk('"x"', '"zz"').replace('"finish_reason":null', '"finish_reason":"stop"'),
    '[DONE]',
  ];
  const { events, want, texts } = chatStreamBothWays(chunks);
  expect(events).toEqual(want);
  expect(texts).toEqual(['He', 'llo', ' "wo\\nrld"', ' ✓', 'x']);
});

test('after the first padded chunk, plain ones are read without parsing the event', () => {
  const d = createChatCompletionsStreamDecoder('openai');
  d.push({ data: role });
  d.push({ data: chunk('"x"', '"aBcD3"') });
  const parse = spyOn(JSON, 'parse');
  try {
    expect(d.push({ data: chunk('"Hello"', '"q7TzLmNw0pY"') })).toEqual([{ type: 'text', text: 'Hello' }]);
    expect(d.push({ data: chunk('" again"', '""') })).toEqual([{ type: 'text', text: ' again' }]);
    expect(parse).toHaveBeenCalledTimes(0);
    // Padding with an escape takes the full path (one parse), with the same result.
    expect(d.push({ data: chunk('"!"', '"a\\"b"') })).toEqual([{ type: 'text', text: '!' }]);
    expect(parse).toHaveBeenCalledTimes(1);
  } finally {
    parse.mockRestore();
  }
});
