import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { setLogSink } from '../src/core/log.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * Issue 7 defect 3: an upstream that echoes the credential it received ("Incorrect API key
 * provided: <key>") on 400, 429, 5xx and mid-stream must never hand the key to the client, the
 * request record or a log line — whatever the key looks like (32-hex Azure key, short key, a
 * custom auth header from `options.headers`).
 */

const AZURE_KEY = '0123456789abcdef0123456789abcdef';
const SHORT_KEY = 'abc123xyz';
const HEADER_SECRET = 'hdr-s3cr3t-77';
const IBM_KEY = 'ibm-cloud-key-1';
/** The token the watsonx IAM endpoint hands out: an exchanged credential the connection never stored. */
const IAM_TOKEN = 'iam.exchanged.t0ken';
const SECRETS = [AZURE_KEY, SHORT_KEY, HEADER_SECRET, IBM_KEY, IAM_TOKEN];

type Mode = 400 | 429 | 500 | 'mid';
let mode: Mode = 400;

/** An OpenAI-wire upstream that quotes every credential it received in its error text. */
const echoServer = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(req) {
    if (new URL(req.url).pathname === '/identity/token') return Response.json({ access_token: IAM_TOKEN, expires_in: 3600 });
    const got = [req.headers.get('authorization')?.replace(/^Bearer /, ''), req.headers.get('api-key'), req.headers.get('x-custom-auth')]
      .filter((v): v is string => !!v)
      .join(' and ');
    const message = `Incorrect API key provided: ${got}. You can find your API key at https://example.invalid/keys (key=${encodeURIComponent(got)}).`;
    const error = {
      error: { message, type: 'invalid_request_error', param: got, code: `bad_key_${got}` },
      errors: [{ message, code: 'bad_key' }],
    };
    if (mode !== 'mid') return Response.json(error, { status: mode, headers: { 'x-echo': got } });
    const chunk = (delta: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    const body = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hello' }),
      `data: ${JSON.stringify({ error: { ...error.error, type: 'server_error' } })}\n\n`,
    ].join('');
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  },
});

let tg: TestGateway;
let apiKey = '';
const logs: string[] = [];

beforeAll(async () => {
  setLogSink((line) => void logs.push(line));
  tg = await startTestGateway({ GATEWAY_RECORD_BODIES: '1', GATEWAY_LOG_LEVEL: 'debug' });
  const url = `http://127.0.0.1:${echoServer.port}`;
  await tg.must(admin('CreateCustomer'), { customerId: 'leaky' });
  // Every case makes the same upstream refuse its key on purpose (breakers are test/circuit-breaker.test.ts's).
  await tg.must(admin('UpsertProjectSetting'), {
    customerId: 'leaky',
    projectId: 'default',
    settingName: 'circuit-breaker',
    settingValue: '{"failures": 0}',
  });
  for (const [model, provider, baseUrl, key, options] of [
    ['az-model', 'azure-openai', `${url}/openai`, AZURE_KEY, {}],
    ['short-model', 'openai', `${url}/v1`, SHORT_KEY, { headers: { 'X-Custom-Auth': HEADER_SECRET } }],
    ['ibm-model', 'watsonx', `${url}/ml/v1`, IBM_KEY, { projectId: 'p1', iamUrl: `${url}/identity/token` }],
  ] as const) {
    const created = (await tg.must(admin('CreateModel'), { model, provider, mode: 'chat', capabilities: ['chat'] })) as {
      model: { id: string };
    };
    await tg.must(admin('AddProjectModel'), { customerId: 'leaky', projectId: 'default', modelId: created.model.id });
    await tg.must(admin('CreateProviderConnection'), { customerId: 'leaky', name: `c-${model}`, provider, baseUrl, apiKey: key, options });
    await tg.must(admin('CreateRoute'), { customerId: 'leaky', model, targets: [{ connection: `c-${model}`, model: 'gpt-4o-mini' }] });
  }
  const k = (await tg.must(apikeyOp('CreateApiKey'), {
    name: 'k',
    userId: 'u1',
    enterpriseContext: { customerId: 'leaky', projectId: 'default' },
  })) as { apiKey: string };
  apiKey = k.apiKey;
}, 60_000);

afterAll(async () => {
  setLogSink(undefined);
  await tg?.stop();
  echoServer.stop(true);
});

const leaked = (text: string): string[] => SECRETS.filter((s) => text.includes(s));

const FORMATS = {
  chat: {
    path: '/v1/chat/completions',
    body: (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  },
  responses: { path: '/v1/responses', body: (model: string, stream: boolean) => ({ model, stream, input: 'hi' }) },
  messages: {
    path: '/v1/messages',
    body: (model: string, stream: boolean) => ({ model, stream, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }),
  },
} as const;

describe('upstream error text never carries the credentials the gateway sent', () => {
  const cases: [Mode, boolean][] = [
    [400, false],
    [400, true],
    [429, false],
    [429, true],
    [500, false],
    [500, true],
    ['mid', true],
  ];
  for (const model of ['az-model', 'short-model', 'ibm-model']) {
    for (const [m, stream] of cases) {
      if (model === 'ibm-model' && m === 'mid') continue; // watsonx streams its own wire
      for (const [name, f] of Object.entries(FORMATS)) {
        test(`${model} ${String(m)} ${stream ? 'stream' : 'json'} ${name}`, async () => {
          mode = m;
          const res = await fetch(`${tg.url}${f.path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey },
            body: JSON.stringify(f.body(model, stream)),
          });
          const text = await res.text();
          if (m !== 'mid') expect(res.status).toBeGreaterThanOrEqual(400);
          // The upstream's message still reaches the client, minus the key.
          expect(text).toContain('Incorrect API key provided');
          expect(leaked(text)).toEqual([]);
          expect(leaked(JSON.stringify([...res.headers.entries()]))).toEqual([]);
        });
      }
    }
  }

  for (const m of [400, 429, 500] as const) {
    test(`extra endpoint: /v1/embeddings ${m}`, async () => {
      mode = m;
      const res = await fetch(`${tg.url}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ model: 'short-model', input: 'hi' }),
      });
      const text = await res.text();
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(text).toContain('Incorrect API key provided');
      expect(leaked(text)).toEqual([]);
    });
  }

  test('records (SearchRequestRecords, bodies included) and logs carry none of the keys', async () => {
    await tg.gw.records.flush();
    const found = await tg.must(admin('SearchRequestRecords'), { customerId: 'leaky', pageSize: 500 });
    const records = (found.records ?? found.requestRecords) as unknown[];
    expect(records.length).toBeGreaterThanOrEqual(60);
    const all = JSON.stringify(found);
    expect(all).toContain('Incorrect API key provided');
    expect(leaked(all)).toEqual([]);
    expect(leaked(logs.join('\n'))).toEqual([]);
  });
});
