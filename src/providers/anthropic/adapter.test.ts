import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { decodeFrames, errorFields, fixtureJson, fixtureText, frameChunks, golden, splitBytes, withLineEndings } from '../golden.ts';
import { asRecord } from '../json.ts';
import type { UpstreamTarget } from '../types.ts';
import { anthropicAdapter } from './index.ts';

interface RequestCase {
  name: string;
  target: UpstreamTarget;
  request: CanonicalRequest;
}

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

describe('anthropic buildRequest (golden)', () => {
  const cases = fixtureJson('anthropic', 'requests.json') as RequestCase[];
  const built: Record<string, unknown> = {};
  for (const c of cases) {
    const r = anthropicAdapter.buildRequest(c.request, c.target);
    built[c.name] = { url: r.url, method: r.method, headers: r.headers, body: JSON.parse(r.body) as unknown };
  }
  const expected = asRecord(golden(built, 'anthropic', 'requests.expected.json')) ?? {};

  for (const c of cases) {
    test(c.name, () => {
      expect(built[c.name]).toEqual(expected[c.name]);
      const r = anthropicAdapter.buildRequest(c.request, c.target);
      const key = c.target.connection.apiKey ?? '';
      expect(r.headers['x-api-key']).toBe(key);
      expect(r.body).not.toContain(key);
      expect(r.url).not.toContain(key);
      for (const [name, value] of Object.entries(r.headers)) if (name !== 'x-api-key') expect(value).not.toContain(key);
      expect(r.headers['authorization']).toBeUndefined();
    });
  }

  test('an image URL that is neither http(s) nor base64 data is an invalid_request', () => {
    const c = cases[0];
    if (!c) throw new Error('fixture missing');
    const request: CanonicalRequest = {
      ...c.request,
      messages: [{ role: 'user', content: [{ type: 'image', url: 'file:///etc/passwd' }] }],
    };
    expect(errorFields(thrown(() => anthropicAdapter.buildRequest(request, c.target)))).toMatchObject({
      kind: 'invalid_request',
      status: 400,
      param: 'messages',
    });
  });
});

describe('anthropic parseResponse (golden)', () => {
  for (const name of ['response-text', 'response-tool-use', 'response-refusal']) {
    test(name, () => {
      const actual = { ...anthropicAdapter.parseResponse(fixtureText('anthropic', `${name}.json`)), created: 0 };
      expect(actual).toEqual(golden(actual, 'anthropic', `${name}.expected.json`) as typeof actual);
    });
  }

  test('malformed bodies → bad_gateway', () => {
    for (const body of ['not json', '{"type":"message","id":"m"}', '"str"']) {
      expect(errorFields(thrown(() => anthropicAdapter.parseResponse(body)))).toMatchObject({ kind: 'bad_gateway', status: 502 });
    }
  });

  test('a 200 body of type error is mapped like a stream error', () => {
    const body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
    expect(errorFields(thrown(() => anthropicAdapter.parseResponse(body)))).toMatchObject({
      kind: 'unavailable',
      status: 503,
      retryable: true,
    });
  });
});

const STREAMS = ['stream-text', 'stream-tool-use', 'stream-thinking', 'stream-overloaded', 'stream-truncated', 'stream-malformed'];

describe('anthropic stream decoder (golden)', () => {
  for (const name of STREAMS) {
    test(name, () => {
      const text = fixtureText('anthropic', `${name}.sse`);
      const outcome = decodeFrames(anthropicAdapter.createStreamDecoder(), frameChunks([text]));
      expect(outcome).toEqual(golden(outcome, 'anthropic', `${name}.expected.json`) as typeof outcome);
      const bytes = new TextEncoder().encode(text);
      for (const sizes of [[1], [3, 1, 4, 1, 5], [4096]]) {
        expect(decodeFrames(anthropicAdapter.createStreamDecoder(), frameChunks(splitBytes(bytes, sizes)))).toEqual(outcome);
      }
      for (const eol of ['\r\n', '\r'] as const) {
        expect(decodeFrames(anthropicAdapter.createStreamDecoder(), frameChunks([withLineEndings(text, eol)]))).toEqual(outcome);
      }
    });
  }

  test('every byte split of the tool-use stream yields the same events', () => {
    const bytes = new TextEncoder().encode(fixtureText('anthropic', 'stream-tool-use.sse'));
    const whole = decodeFrames(anthropicAdapter.createStreamDecoder(), frameChunks([bytes]));
    for (let i = 0; i <= bytes.length; i++) {
      expect(decodeFrames(anthropicAdapter.createStreamDecoder(), frameChunks([bytes.subarray(0, i), bytes.subarray(i)]))).toEqual(whole);
    }
  });

  test('dispatch is on data.type, not the event line', () => {
    const d = anthropicAdapter.createStreamDecoder();
    const events = [
      ...d.push({
        event: 'bogus',
        data: '{"type":"message_start","message":{"id":"m1","model":"c","usage":{"input_tokens":5,"output_tokens":1}}}',
      }),
      ...d.push({ data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}' }),
      ...d.push({ event: 'message_delta', data: '{"type":"message_stop"}' }),
      ...d.end(),
    ];
    expect(events).toEqual([
      { type: 'start', id: 'm1', model: 'c', usage: { inputTokens: 5, outputTokens: 1 } },
      { type: 'text', text: 'x' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  test('rate_limit_error and api_error mid-stream', () => {
    const rl = thrown(() =>
      anthropicAdapter.createStreamDecoder().push({ data: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' }),
    );
    expect(errorFields(rl)).toMatchObject({ kind: 'rate_limit', status: 429, message: 'slow down', retryable: true });
    const api = thrown(() =>
      anthropicAdapter.createStreamDecoder().push({ data: '{"type":"error","error":{"type":"api_error","message":"boom"}}' }),
    );
    expect(errorFields(api)).toMatchObject({ kind: 'upstream_error', status: 502, message: 'boom' });
  });
});

interface ErrorCase {
  name: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

describe('anthropic parseError (golden)', () => {
  const cases = fixtureJson('anthropic', 'errors.json') as ErrorCase[];
  const actual: Record<string, unknown> = {};
  const errors = new Map<string, GatewayError>();
  for (const c of cases) {
    const e = anthropicAdapter.parseError(c.status, c.body, new Headers(c.headers));
    errors.set(c.name, e);
    actual[c.name] = { ...errorFields(e), upstreamBody: e.upstreamBody };
  }
  const expected = asRecord(golden(actual, 'anthropic', 'errors.expected.json')) ?? {};
  for (const c of cases) {
    test(c.name, () => {
      expect(actual[c.name]).toEqual(expected[c.name]);
      expect(errors.get(c.name)?.upstreamStatus).toBe(c.status);
    });
  }
});
