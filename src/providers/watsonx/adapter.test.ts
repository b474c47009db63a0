import { describe, expect, test } from 'bun:test';
import { errorFields } from '../golden.ts';
import { fakeHttp, goldenSuite, thrown } from '../golden-suite.ts';
import type { UpstreamTarget } from '../types.ts';
import { createWatsonxAdapter, watsonxAdapter, WATSONX_DEFAULT_IAM_URL } from './index.ts';

await goldenSuite({
  family: 'watsonx',
  adapter: watsonxAdapter,
  responses: ['response-text', 'response-tool-call-model-id-only'],
  streams: ['stream-text.sse', 'stream-error.sse'],
});

const KEY = 'IBMCLOUDKEY_TEST_0123456789abcdefghijklmn';
const target = (options: UpstreamTarget['connection']['options'] = { projectId: 'p' }, id = 'w1'): UpstreamTarget => ({
  upstreamModel: 'ibm/granite-3-3-8b-instruct',
  connection: { id, name: 'wx', provider: 'watsonx', apiKey: KEY, options },
});
const REQ = {
  model: 'm',
  stream: false,
  includeUsage: false,
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }],
};

describe('watsonx IAM token', () => {
  test('exchanges the API key at the IAM endpoint, sends the bearer token and caches it until expiry', async () => {
    let now = 1_760_000_000_000;
    const a = createWatsonxAdapter({ now: () => now });
    const { http, calls } = fakeHttp(() => ({
      status: 200,
      body: JSON.stringify({
        access_token: 'eyJraWQiOiJ.iam-token',
        refresh_token: 'not_supported',
        token_type: 'Bearer',
        expires_in: 3600,
        expiration: now / 1000 + 3600,
      }),
    }));
    const auth = async (t: UpstreamTarget) =>
      a.authorize ? a.authorize(a.buildRequest(REQ, t), t, http) : Promise.reject(new Error('no authorize'));
    const r = await auth(target());
    expect(r.headers['authorization']).toBe('Bearer eyJraWQiOiJ.iam-token');
    expect(calls[0]?.url).toBe(WATSONX_DEFAULT_IAM_URL);
    expect(calls[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(calls[0]?.body ?? ''))).toEqual({
      grant_type: 'urn:ibm:params:oauth:grant-type:apikey',
      apikey: KEY,
    });
    await auth(target());
    expect(calls).toHaveLength(1);
    now += 3600_000 - 30_000;
    await auth(target());
    expect(calls).toHaveLength(2);
    await auth(target({ projectId: 'p', iamUrl: 'https://iam.test/identity/token' }));
    expect(calls[2]?.url).toBe('https://iam.test/identity/token');
  });

  test('a refused exchange is 502 upstream_auth_failed and never shows the key', async () => {
    const a = createWatsonxAdapter();
    const { http } = fakeHttp(() => ({
      status: 400,
      body: `{"errorCode":"BXNIM0415E","errorMessage":"Provided API key could not be found.","context":{"apikey":"${KEY}"}}`,
    }));
    const e = await thrown(() => (a.authorize ? a.authorize(a.buildRequest(REQ, target()), target(), http) : Promise.resolve()));
    expect(errorFields(e)).toMatchObject({ status: 502, errorCode: 'upstream_auth_failed', upstreamStatus: 400 });
    expect(JSON.stringify(errorFields(e))).not.toContain(KEY);
    expect((e as { upstreamBody?: string }).upstreamBody ?? '').not.toContain(KEY);
  });

  test('project or space is required', async () => {
    const e = await thrown(() => watsonxAdapter.buildRequest(REQ, target({})));
    expect(errorFields(e)).toMatchObject({ errorCode: 'provider_misconfigured' });
    expect((e as Error).message).toContain('options.projectId');
  });
});

test('an upstream 401 drops cached tokens so the next request exchanges again', async () => {
  const a = createWatsonxAdapter();
  const { http, calls } = fakeHttp(() => ({ status: 200, body: '{"access_token":"t1","expires_in":3600}' }));
  const auth = () => (a.authorize ? a.authorize(a.buildRequest(REQ, target()), target(), http) : Promise.reject(new Error('no authorize')));
  await auth();
  await auth();
  expect(calls).toHaveLength(1);
  a.parseError(401, '{}', new Headers());
  await auth();
  expect(calls).toHaveLength(2);
});

test('a reasoning effort is refused naming the client field, never dropped (watsonx takes none)', async () => {
  const e = await thrown(() => watsonxAdapter.buildRequest({ ...REQ, reasoningEffort: 'high' }, target()));
  expect(errorFields(e)).toMatchObject({ status: 400, param: 'reasoning_effort' });
  expect(String((e as Error).message)).toContain('watsonx');
  // Without one, the request is built as before.
  expect(JSON.parse(String(watsonxAdapter.buildRequest(REQ, target()).body))).not.toHaveProperty('reasoning_effort');
});
