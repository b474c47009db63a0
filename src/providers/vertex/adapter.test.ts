import { describe, expect, test } from 'bun:test';
import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { GatewayError } from '../../core/errors.ts';
import { errorFields } from '../golden.ts';
import { fakeHttp, goldenSuite, thrown } from '../golden-suite.ts';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.ts';
import { createVertexAdapter, vertexAdapter } from './index.ts';
import { vertexPublisher } from './request.ts';

await goldenSuite({
  family: 'vertex',
  adapter: vertexAdapter,
  responses: ['response-gemini', 'response-claude'],
  streams: ['stream-gemini.sse', 'stream-claude.sse', 'stream-claude-overloaded.sse'],
});

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const TOKEN_URI = 'https://oauth.example.test/token';
const SA = {
  type: 'service_account',
  project_id: 'acme-ml',
  private_key_id: 'kid-1',
  private_key: privateKey,
  client_email: 'gw@acme-ml.iam.gserviceaccount.com',
  token_uri: TOKEN_URI,
};
const target = (id = 'conn_1', sa: object = SA): UpstreamTarget => ({
  upstreamModel: 'gemini-2.5-flash',
  connection: { id, name: 'vertex', provider: 'vertex', apiKey: JSON.stringify(sa), options: {} },
});
const REQ = {
  model: 'm',
  stream: false,
  includeUsage: false,
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }],
};

const okToken = (token = 'ya29.test-token', expiresIn = 3600) =>
  fakeHttp(() => ({ status: 200, body: JSON.stringify({ access_token: token, expires_in: expiresIn, token_type: 'Bearer' }) }));

const authorize = (
  a: ReturnType<typeof createVertexAdapter>,
  t: UpstreamTarget,
  http: ReturnType<typeof okToken>['http'],
): Promise<UpstreamHttpRequest> => {
  const built = a.buildRequest(REQ, t);
  if (!a.authorize) throw new Error('vertex must authorize');
  return a.authorize(built, t, http);
};

describe('vertex service-account token exchange', () => {
  test('posts an RS256 JWT-bearer assertion to the key token_uri and sends the access token', async () => {
    let now = 1_760_000_000_000;
    const a = createVertexAdapter({ now: () => now });
    const { http, calls } = okToken();
    const r = await authorize(a, target(), http);
    expect(r.headers['authorization']).toBe('Bearer ya29.test-token');
    expect(r.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/acme-ml/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(calls).toHaveLength(1);
    const call = calls[0];
    expect(call?.url).toBe(TOKEN_URI);
    expect(call?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(call?.body ?? '');
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const assertion = form.get('assertion') ?? '';
    expect(decodeProtectedHeader(assertion)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
    const { payload } = await jwtVerify(assertion, await importSPKI(publicKey, 'RS256'), {
      audience: TOKEN_URI,
      currentDate: new Date(now),
    });
    expect(payload).toMatchObject({
      iss: SA.client_email,
      sub: SA.client_email,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      iat: now / 1000,
      exp: now / 1000 + 3600,
    });
    // Cached until a minute before expiry, then refreshed.
    now += 3600_000 - 61_000;
    await authorize(a, target(), http);
    expect(calls).toHaveLength(1);
    now += 2_000;
    await authorize(a, target(), http);
    expect(calls).toHaveLength(2);
  });

  test('tokens are cached per connection and key; concurrent requests share one exchange', async () => {
    const a = createVertexAdapter();
    const { http, calls } = okToken();
    await Promise.all([authorize(a, target('c1'), http), authorize(a, target('c1'), http), authorize(a, target('c1'), http)]);
    expect(calls).toHaveLength(1);
    await authorize(a, target('c2'), http);
    expect(calls).toHaveLength(2);
    await authorize(a, target('c1', { ...SA, private_key_id: 'kid-2' }), http);
    expect(calls).toHaveLength(3);
  });

  test('a refused exchange is a 502 upstream_auth_failed without secrets; failures are not cached', async () => {
    const a = createVertexAdapter();
    const { http, calls } = fakeHttp(() => ({
      status: 400,
      body: '{"error":"invalid_grant","error_description":"Invalid JWT Signature."}',
    }));
    const e = await thrown(() => authorize(a, target(), http));
    expect(errorFields(e)).toMatchObject({
      kind: 'upstream_error',
      status: 502,
      errorCode: 'upstream_auth_failed',
      retryable: true,
      upstreamStatus: 400,
    });
    const err = e as GatewayError;
    expect(err.message).toContain('oauth.example.test');
    const assertion = new URLSearchParams(calls[0]?.body ?? '').get('assertion') ?? '';
    for (const secret of [assertion, privateKey, 'BEGIN PRIVATE KEY']) {
      expect(err.message).not.toContain(secret);
      expect(err.upstreamBody ?? '').not.toContain(secret);
    }
    await thrown(() => authorize(a, target(), http));
    expect(calls).toHaveLength(2);
  });

  test('a 200 without access_token, and an unreachable endpoint, are upstream_auth_failed too', async () => {
    const a = createVertexAdapter();
    const empty = fakeHttp(() => ({ status: 200, body: '{}' }));
    expect(errorFields(await thrown(() => authorize(a, target(), empty.http)))).toMatchObject({ errorCode: 'upstream_auth_failed' });
    const down = () => Promise.reject(new GatewayError({ kind: 'unavailable', message: 'Could not reach the upstream provider.' }));
    expect(errorFields(await thrown(() => authorize(a, target('c9'), down)))).toMatchObject({
      status: 502,
      errorCode: 'upstream_auth_failed',
    });
    const timeout = () => Promise.reject(new GatewayError({ kind: 'timeout', message: 'late' }));
    expect(errorFields(await thrown(() => authorize(a, target('c10'), timeout)))).toMatchObject({ kind: 'timeout' });
  });

  test('a key that is not a service-account JSON key, or no project, is provider_misconfigured without the key', async () => {
    const bad: UpstreamTarget = { ...target(), connection: { ...target().connection, apiKey: 'AIzaSyNOTJSON0123456789' } };
    const e = await thrown(() => vertexAdapter.buildRequest(REQ, bad));
    expect(errorFields(e)).toMatchObject({ errorCode: 'provider_misconfigured' });
    expect((e as Error).message).not.toContain('AIzaSyNOTJSON');
    const noProject = target('c3', { ...SA, project_id: undefined });
    expect(((await thrown(() => vertexAdapter.buildRequest(REQ, noProject))) as Error).message).toContain('options.projectId');
    const badKey = target('c4', { ...SA, private_key: 'garbage' });
    const e2 = await thrown(() => authorize(createVertexAdapter(), badKey, okToken().http));
    expect(errorFields(e2)).toMatchObject({ errorCode: 'provider_misconfigured' });
  });

  test('publisher by model name', () => {
    expect(vertexPublisher('claude-opus-4-1@20250805')).toBe('anthropic');
    expect(vertexPublisher('publishers/anthropic/models/claude-3-haiku@20240307')).toBe('anthropic');
    expect(vertexPublisher('gemini-2.5-pro')).toBe('google');
    expect(vertexPublisher('publishers/google/models/gemini-2.0-flash')).toBe('google');
  });
});

test('vertex hosts: regional, global and the us/eu multi-regions', () => {
  const url = (location: string) =>
    vertexAdapter.buildRequest(REQ, { ...target(), connection: { ...target().connection, options: { location } } }).url;
  expect(url('europe-west4')).toStartWith('https://europe-west4-aiplatform.googleapis.com/v1/projects/acme-ml/locations/europe-west4/');
  expect(url('global')).toStartWith('https://aiplatform.googleapis.com/v1/projects/acme-ml/locations/global/');
  expect(url('us')).toStartWith('https://aiplatform.us.rep.googleapis.com/v1/projects/acme-ml/locations/us/');
  expect(url('eu')).toStartWith('https://aiplatform.eu.rep.googleapis.com/v1/projects/acme-ml/locations/eu/');
});
