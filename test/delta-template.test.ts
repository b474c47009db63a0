import { expect, test } from 'bun:test';
import type { StreamEvent } from '../src/canonical/types.ts';
import { learnDeltaTemplate, templateText } from '../src/providers/delta-template.ts';
import { createMessagesStreamDecoder } from '../src/providers/anthropic/stream.ts';
import { mulberry32 } from './support/fuzz-bodies.ts';
import { chatAfter, chatStreamBothWays, type Outcome, run } from './support/decode-outcome.ts';

/**
 * The Chat Completions decoder reads per-token chunks through a template learnt from the first one
 * (delta-template.ts). Whatever the chunk, the result must be what decoding it in full gives: the
 * same events, or the same failure.
 */

const head =
  '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":';
const tail = '},"logprobs":null,"finish_reason":null}],"usage":null}';
const role =
  '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}';
const content = (token: string): string => `${head}${token}${tail}`;

/** The full path: a fresh decoder's second chunk is always decoded in full (templates are learnt from it). */
const full = (data: string): Outcome => chatAfter([role], data);

/** A decoder that learnt the template from `content("x")`, then decodes `data`. */
const templated = (data: string): Outcome => chatAfter([role, content('"x"')], data);

test('the template is learnt from a plain content chunk and reads its text', () => {
  const t = learnDeltaTemplate(content('"x"'), JSON.parse(content('"x"')) as Record<string, unknown>);
  expect(t).toEqual({ prefix: head, suffix: tail });
  if (!t) return;
  expect(templateText(t, content('"Grüße 👋"'))).toBe('Grüße 👋');
  expect(templateText(t, content('"a\\"b\\\\c\\n\\u00e9"'))).toBe('a"b\\c\né');
  expect(templateText(t, content('"a","x":"b"'))).toBeUndefined();
  expect(templateText(t, content('"abc\\"'))).toBeUndefined();
});

test('chunks of other shapes teach no template', () => {
  const learn = (s: string) => learnDeltaTemplate(s, JSON.parse(s) as Record<string, unknown>);
  expect(learn(role)).toBeUndefined();
  // A second member after the text, a finish reason, usage, a second choice, a duplicate delta.
  expect(learn(content('"x","refusal":null'))).toBeUndefined();
  expect(learn(content('"x"').replace('"finish_reason":null', '"finish_reason":"stop"'))).toBeUndefined();
  expect(
    learn(content('"x"').replace('"usage":null', '"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}')),
  ).toBeUndefined();
  expect(learn(content('"x"').replace('}],"usage"', '},{"index":1,"delta":{}}],"usage"'))).toBeUndefined();
  expect(learn(content('"x"').replace('},"logprobs"', '},"delta": {"content":"y"},"logprobs"'))).toBeUndefined();
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
    '"tab\\there"',
    '"nl\\n"',
    '"raw\ttab"',
    '"raw\nnl"',
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
  for (const token of tokens) {
    const data = content(token);
    expect({ token, out: templated(data) }).toEqual({ token, out: full(data) });
  }
  // Same prefix and suffix around something else entirely, and chunks that only look alike.
  for (const data of [
    `${head}"x"${tail}x`,
    `x${head}"x"${tail}`,
    `${head}"x"}],"usage":null}`,
    `${head}"x"${tail.replace('null}]', '"stop"}]')}`,
  ]) {
    expect({ data, out: templated(data) }).toEqual({ data, out: full(data) });
  }
});

test('random texts (escapes, controls, quotes, astral characters): same events on both paths', () => {
  const rnd = mulberry32(12);
  const alphabet = ['a', 'é', '👋', '"', '\\', '\n', '\t', '\u0001', '\u2028', ' ', '/', '<', '\ud800'];
  for (let i = 0; i < 400; i++) {
    let s = '';
    const n = Math.floor(rnd() * 12);
    for (let j = 0; j < n; j++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    // As JSON would write it, and with `\u` escapes for everything outside ASCII.
    const tokens = [
      JSON.stringify(s),
      JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    ];
    for (const token of tokens) {
      const data = content(token);
      const want = full(data);
      expect(templated(data)).toEqual(want);
      expect(want).toEqual({ events: s === '' ? [] : [{ type: 'text', text: s }] });
    }
  }
});

test('a whole stream through the template: same events as decoding every chunk in full', () => {
  const chunks = [
    role,
    ...['He', 'llo', ' "wo\\nrld"', '', ' ✓'].map((t) => content(JSON.stringify(t))),
    content('"x"').replace('"finish_reason":null', '"finish_reason":"stop"'),
    '[DONE]',
  ];
  const { events, want, texts } = chatStreamBothWays(chunks);
  expect(events).toEqual(want);
  expect(texts).toEqual(['He', 'llo', ' "wo\\nrld"', ' ✓', 'x']);
});

// ---- Anthropic Messages: `content_block_delta` text deltas --------------------------------------

const aHead = (index: number) => `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":`;
const aDelta = (token: string, index = 0): string => `${aHead(index)}${token}}}`;
const aStart =
  '{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}';

const aFull = (data: string): Outcome => {
  const d = createMessagesStreamDecoder('anthropic');
  d.push({ data: aStart });
  return run(() => d.push({ data }));
};
const aTemplated = (data: string): Outcome => {
  const d = createMessagesStreamDecoder('anthropic');
  d.push({ data: aStart });
  d.push({ data: aDelta('"x"') });
  return run(() => d.push({ data }));
};

test('Anthropic text deltas: the template path gives what the full path gives', () => {
  const rnd = mulberry32(7);
  const alphabet = ['a', 'é', '👋', '"', '\\', '\n', '\u0001', ' ', '\ud800'];
  const tokens = ['"x"', '""', '"a","x":"b"', '"abc\\"', '"raw\nnl"', 'null', '"a"  ', '"\\u00e9"'];
  for (let i = 0; i < 200; i++) {
    let s = '';
    for (let j = Math.floor(rnd() * 10); j > 0; j--) s += alphabet[Math.floor(rnd() * alphabet.length)];
    tokens.push(JSON.stringify(s));
  }
  for (const token of tokens) expect({ token, out: aTemplated(aDelta(token)) }).toEqual({ token, out: aFull(aDelta(token)) });
  // Another block's index, a duplicate text member, a thinking delta with the same tail: the full path.
  for (const data of [
    aDelta('"y"', 1),
    `${aHead(0)}"x","text":"y"}}`,
    '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}',
    `${aDelta('"x"')}x`,
  ]) {
    expect({ data, out: aTemplated(data) }).toEqual({ data, out: aFull(data) });
  }
});

test('Anthropic: a stream over two text blocks gives the same events as decoding each event in full', () => {
  const evs = [
    aStart,
    aDelta('"He"'),
    aDelta('"llo"'),
    aDelta('" \\"q\\""'),
    '{"type":"content_block_stop","index":0}',
    aDelta('"B"', 1),
    aDelta('"C"', 1),
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}',
  ];
  const d = createMessagesStreamDecoder('anthropic');
  const got = evs.flatMap((data) => d.push({ data }));
  const want = evs.flatMap((data) => (data === aStart ? [] : (aFull(data) as { events: StreamEvent[] }).events));
  expect(got).toEqual([...createMessagesStreamDecoder('anthropic').push({ data: aStart }), ...want]);
  expect(got.filter((e) => e.type === 'text').map((e) => (e.type === 'text' ? e.text : ''))).toEqual(['He', 'llo', ' "q"', 'B', 'C']);
});
