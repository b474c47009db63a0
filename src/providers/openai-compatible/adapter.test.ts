import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest } from '../../canonical/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { decodeFrames, errorFields, fixtureJson, fixtureText, frameChunks, golden, splitBytes, withLineEndings } from '../golden.ts';
import { asRecord, asString, isRecord } from '../json.ts';
import { openaiAdapter } from '../openai.ts';
import { getAdapter } from '../registry.ts';
import type { HttpProviderAdapter, UpstreamTarget } from '../types.ts';
import { alnum9 } from './request.ts';

const http = (id: string): HttpProviderAdapter => {
  const a = getAdapter(id);
  if (a?.kind !== 'http') throw new Error(`no http adapter ${id}`);
  return a;
};

interface RequestCase {
  name: string;
  provider: string;
  target: UpstreamTarget;
  request: CanonicalRequest;
}

const requestCases = fixtureJson('openai', 'requests.json') as RequestCase[];

describe('openai-compatible buildRequest (golden)', () => {
  const built: Record<string, unknown> = {};
  for (const c of requestCases) {
    const r = http(c.provider).buildRequest(c.request, c.target);
    built[c.name] = { url: r.url, method: r.method, headers: r.headers, body: JSON.parse(r.body) as unknown };
  }
  const expected = asRecord(golden(built, 'openai', 'requests.expected.json')) ?? {};

  for (const c of requestCases) {
    test(c.name, () => {
      expect(built[c.name]).toEqual(expected[c.name]);
      // The key appears in the authorization header and nowhere else.
      const r = http(c.provider).buildRequest(c.request, c.target);
      const key = c.target.connection.apiKey;
      if (key !== undefined) {
        expect(r.body).not.toContain(key);
        expect(r.url).not.toContain(key);
        for (const [name, value] of Object.entries(r.headers)) {
          if (name !== 'authorization') expect(value).not.toContain(key);
        }
      }
    });
  }

  test('streaming always asks for usage', () => {
    for (const c of requestCases.filter((x) => x.request.stream && x.provider !== 'mistral')) {
      const body = JSON.parse(http(c.provider).buildRequest(c.request, c.target).body) as unknown;
      expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    }
  });

  test('a base-URL placeholder without its option is a clear provider_misconfigured error', () => {
    const c = requestCases.find((x) => x.name === 'cloudflare-account-url');
    if (!c) throw new Error('fixture missing');
    const target: UpstreamTarget = { ...c.target, connection: { ...c.target.connection, options: {} } };
    let err: unknown;
    try {
      http('cloudflare-workers-ai').buildRequest(c.request, target);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect(errorFields(err)).toMatchObject({ kind: 'upstream_error', errorCode: 'provider_misconfigured' });
    expect((err as GatewayError).message).toContain('options.accountId');
  });

  test('alnum9 keeps valid ids and maps others deterministically to 9 alphanumerics', () => {
    expect(alnum9('abc123XYZ')).toBe('abc123XYZ');
    const a = alnum9('call_Vh2YbmcN0gPzKqH1uE3xTr7w');
    expect(a).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(alnum9('call_Vh2YbmcN0gPzKqH1uE3xTr7w')).toBe(a);
    expect(alnum9('call_other')).not.toBe(a);
  });
});

describe('openai-compatible parseResponse (golden)', () => {
  for (const name of ['response-text', 'response-tool-calls', 'response-deepseek-reasoning', 'response-length']) {
    test(name, () => {
      const actual = openaiAdapter.parseResponse(fixtureText('openai', `${name}.json`));
      expect(actual).toEqual(golden(actual, 'openai', `${name}.expected.json`) as typeof actual);
    });
  }

  const bad: [string, string][] = [
    ['not JSON', '<html>502 Bad Gateway</html>'],
    ['JSON without choices', '{"id":"x","object":"chat.completion"}'],
    ['empty choices', '{"id":"x","choices":[]}'],
    ['a JSON array', '[1,2]'],
  ];
  for (const [name, body] of bad) {
    test(`${name} → bad_gateway 502`, () => {
      let err: unknown;
      try {
        openaiAdapter.parseResponse(body);
      } catch (e) {
        err = e;
      }
      expect(errorFields(err)).toMatchObject({ kind: 'bad_gateway', status: 502 });
    });
  }

  test('a 200 body carrying an error object is an upstream error', () => {
    let err: unknown;
    try {
      openaiAdapter.parseResponse('{"error":{"message":"Provider returned error","code":502}}');
    } catch (e) {
      err = e;
    }
    expect(errorFields(err)).toMatchObject({ kind: 'upstream_error', status: 502, message: 'Provider returned error' });
  });
});

/** Fixture → the adapter whose upstream it was recorded from (Azure's shape is decoded by openai). */
const STREAMS: [string, string][] = [
  ['stream-text', 'openai'],
  ['stream-tool-calls', 'openai'],
  ['stream-midstream-error', 'vllm'],
  ['stream-deepseek-reasoning', 'deepseek'],
  ['stream-azure', 'openai'],
  ['stream-groq', 'groq'],
  ['stream-xai', 'xai'],
  ['stream-openrouter-error', 'openrouter'],
  ['stream-truncated', 'openai'],
  ['stream-malformed', 'openai'],
];

describe('openai-compatible stream decoder (golden)', () => {
  for (const [name, provider] of STREAMS) {
    test(`${name} (${provider})`, () => {
      const adapter = http(provider);
      const text = fixtureText('openai', `${name}.sse`);
      const outcome = decodeFrames(adapter.createStreamDecoder(), frameChunks([text]));
      const expected = golden(outcome, 'openai', `${name}.expected.json`);
      expect(outcome).toEqual(expected as typeof outcome);

      // Same events whatever the chunking and line endings.
      const bytes = new TextEncoder().encode(text);
      for (const sizes of [[1], [2, 3, 5], [7, 1, 64], [4096]]) {
        const again = decodeFrames(adapter.createStreamDecoder(), frameChunks(splitBytes(bytes, sizes)));
        expect(again).toEqual(outcome);
      }
      for (const eol of ['\r\n', '\r'] as const) {
        const again = decodeFrames(adapter.createStreamDecoder(), frameChunks([withLineEndings(text, eol)]));
        expect(again).toEqual(outcome);
      }
    });
  }

  test('every byte split of the tool-call stream yields the same events', () => {
    const bytes = new TextEncoder().encode(fixtureText('openai', 'stream-tool-calls.sse'));
    const whole = decodeFrames(openaiAdapter.createStreamDecoder(), frameChunks([bytes]));
    for (let i = 0; i <= bytes.length; i++) {
      const split = decodeFrames(openaiAdapter.createStreamDecoder(), frameChunks([bytes.subarray(0, i), bytes.subarray(i)]));
      expect(split).toEqual(whole);
    }
  });

  test('tool calls without ids get generated ids; an id change in the same slot opens a new call', () => {
    const d = openaiAdapter.createStreamDecoder();
    const chunk = (delta: unknown, finish: string | null = null) => ({
      data: JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }),
    });
    const events = [
      ...d.push(chunk({ tool_calls: [{ index: 0, function: { name: 'a', arguments: '{}' } }] })),
      ...d.push(chunk({ tool_calls: [{ index: 0, id: 'call_b', function: { name: 'b', arguments: '{"x":1}' } }] })),
      ...d.push(chunk({}, 'tool_calls')),
      ...d.end(),
    ];
    expect(events).toEqual([
      { type: 'start', id: 'c1', model: 'm' },
      { type: 'tool_call_start', index: 0, id: 'call_0', name: 'a' },
      { type: 'tool_call_delta', index: 0, arguments: '{}' },
      { type: 'tool_call_start', index: 1, id: 'call_b', name: 'b' },
      { type: 'tool_call_delta', index: 1, arguments: '{"x":1}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  test('frames after [DONE] are ignored', () => {
    const d = openaiAdapter.createStreamDecoder();
    d.push({ data: '{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}' });
    d.push({ data: '[DONE]' });
    expect(d.push({ data: 'garbage' })).toEqual([]);
    expect(d.end()).toEqual([]);
  });
});

interface ErrorCase {
  name: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

describe('openai-compatible parseError (golden)', () => {
  const cases = fixtureJson('openai', 'errors.json') as ErrorCase[];
  const actual: Record<string, unknown> = {};
  const errors = new Map<string, GatewayError>();
  for (const c of cases) {
    const e = openaiAdapter.parseError(c.status, c.body, new Headers(c.headers));
    errors.set(c.name, e);
    actual[c.name] = { ...errorFields(e), upstreamBody: e.upstreamBody };
  }
  const expected = asRecord(golden(actual, 'openai', 'errors.expected.json')) ?? {};
  for (const c of cases) {
    test(c.name, () => {
      expect(actual[c.name]).toEqual(expected[c.name]);
      const e = errors.get(c.name);
      expect(e?.upstreamStatus).toBe(c.status);
      expect((e?.upstreamBody ?? '').length).toBeLessThanOrEqual(2000);
    });
  }

  test('auth failures never echo the upstream message (it may contain part of the key)', () => {
    for (const status of [401, 403]) {
      const e = openaiAdapter.parseError(status, '{"error":{"message":"Incorrect API key provided: sk-abcdefghijklmnop"}}', new Headers());
      expect(e.message).not.toContain('sk-');
      expect(e.upstreamBody).not.toContain('abcdefghijklmnop');
    }
  });

  test('a huge body keeps only a 2000-character excerpt', () => {
    const e = openaiAdapter.parseError(500, `{"error":{"message":"${'x'.repeat(10000)}"}}`, new Headers());
    expect(e.upstreamBody?.length).toBe(2000);
    expect(e.message.length).toBeLessThanOrEqual(1000);
  });

  test('Retry-After as an HTTP date', () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const e = openaiAdapter.parseError(429, '{}', new Headers({ 'retry-after': at }));
    expect(e.retryAfterSeconds).toBeGreaterThanOrEqual(28);
    expect(e.retryAfterSeconds).toBeLessThanOrEqual(31);
  });

  test('every fixture message is a string without secrets', () => {
    for (const e of errors.values()) {
      expect(isRecord({ m: asString(e.message) })).toBe(true);
      expect(e.message).not.toMatch(/sk-[A-Za-z0-9]{6,}/);
    }
  });
});
