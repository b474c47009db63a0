import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { admin, apikeyOp, type TestGateway } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/** Every row of the seed's error tables that the inference path can produce, over real HTTP. */

let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let world: World | undefined;
beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, p } = world);
}, 60_000);
afterAll(() => stopWorld(world));

interface Sent {
  status: number;
  headers: Headers;
  body: { error?: { message: string; type: string; param: string | null; code: string }; type?: string };
}

const send = async (path: string, body: unknown, headers: Record<string, string> = {}, method = 'POST'): Promise<Sent> => {
  const res = await fetch(`${tg.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}`, ...headers },
    ...(method === 'GET' ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Sent['body'] };
};

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

const expectError = (r: Sent, status: number, type: string, code: string, param: string | null = null) => {
  expect(r.status).toBe(status);
  expect(r.body.error).toMatchObject({ type, code, param });
  expect(typeof r.body.error?.message).toBe('string');
  expect(r.headers.get('x-request-id')).toMatch(UUID);
};

describe('authentication', () => {
  test('missing key → 401 invalid_api_key', async () => {
    expectError(
      await send('/v1/chat/completions', chat('gpt-mini'), { authorization: '' }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
  });
  test('unknown key → 401', async () => {
    expectError(
      await send('/v1/chat/completions', chat('gpt-mini'), { authorization: 'Bearer sk-not-a-real-key-000000000000000000000' }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
  });
  test('malformed Authorization header → 401', async () => {
    expectError(
      await send('/v1/chat/completions', chat('gpt-mini'), { authorization: 'Basic abc' }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
  });
  test('revoked key → 401 once revoked, and /v1/models too', async () => {
    const k = (await tg.must(apikeyOp('CreateApiKey'), { name: 'tmp', enterpriseContext: { customerId: 'acme' } })) as {
      apiKey: string;
      id: string;
    };
    expect((await send('/v1/chat/completions', chat('gpt-mini'), { authorization: `Bearer ${k.apiKey}` })).status).toBe(200);
    await tg.must(apikeyOp('RevokeApiKey'), { id: k.id });
    expectError(
      await send('/v1/chat/completions', chat('gpt-mini'), { authorization: `Bearer ${k.apiKey}` }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
    expectError(
      await send('/v1/models', undefined, { authorization: `Bearer ${k.apiKey}` }, 'GET'),
      401,
      'authentication_error',
      'invalid_api_key',
    );
  });
  test('Messages errors carry the Anthropic envelope too', async () => {
    const r = await send('/v1/messages', { model: 'claude-mini', max_tokens: 5, messages: [] }, { authorization: '' });
    expect(r.status).toBe(401);
    expect(r.body.type).toBe('error');
    expect(r.body.error?.type).toBe('authentication_error');
  });
});

describe('model resolution', () => {
  test('model not in the catalogue → 404 not_found_error model_not_found, param model', async () => {
    expectError(await send('/v1/chat/completions', chat('no-such-model')), 404, 'not_found_error', 'model_not_found', 'model');
  });

  test("model in the catalogue but not the key's project → 403", async () => {
    await tg.must(admin('CreateModel'), { model: 'other-model', provider: 'openai' });
    const r = await send('/v1/chat/completions', chat('other-model'));
    expect(r.status).toBe(403);
    expect(r.body.error?.param).toBe('model');
  });

  test('assigned but no route → 404 model_not_routed', async () => {
    const m = (await tg.must(admin('CreateModel'), { model: 'unrouted', provider: 'openai' })) as { model: { id: string } };
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    expectError(await send('/v1/chat/completions', chat('unrouted')), 404, 'not_found_error', 'model_not_routed', 'model');
  });

  test('route disabled → 503 model_not_ready with Retry-After: 30, absent from /v1/models', async () => {
    const m = (await tg.must(admin('CreateModel'), { model: 'paused', provider: 'openai' })) as { model: { id: string } };
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      model: 'paused',
      enabled: false,
      targets: [{ connection: 'mock-openai', model: 'x' }],
    });
    const r = await send('/v1/chat/completions', chat('paused'));
    expect(r.status).toBe(503);
    expect(r.body.error?.code).toBe('model_not_ready');
    expect(r.headers.get('retry-after')).toBe('30');
    const models = (await (await fetch(`${tg.url}/v1/models`, { headers: { authorization: `Bearer ${p.apiKey}` } })).json()) as {
      data: { id: string }[];
    };
    expect(models.data.map((d) => d.id)).not.toContain('paused');
  });

  test('route through a connection that does not exist → 503 model_not_ready', async () => {
    const m = (await tg.must(admin('CreateModel'), { model: 'dangling', provider: 'openai' })) as { model: { id: string } };
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      model: 'dangling',
      targets: [{ connection: 'not-created-yet', model: 'x' }],
    });
    expectError(await send('/v1/chat/completions', chat('dangling')), 503, 'service_unavailable_error', 'model_not_ready', 'model');
  });
});

describe('malformed requests', () => {
  test('invalid JSON → 400', async () => {
    expectError(await send('/v1/chat/completions', '{"model":'), 400, 'invalid_request_error', 'invalid_json');
  });
  test('missing model → 400 param model', async () => {
    const r = await send('/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).toBe(400);
    expect(r.body.error?.param).toBe('model');
  });
  test('missing messages → 400 param messages', async () => {
    const r = await send('/v1/chat/completions', { model: 'gpt-mini' });
    expect(r.status).toBe(400);
    expect(r.body.error?.param).toBe('messages');
  });
  test('Responses without input → 400 param input', async () => {
    const r = await send('/v1/responses', { model: 'gpt-mini' });
    expect(r.status).toBe(400);
    expect(r.body.error?.param).toBe('input');
  });
  test('Messages without max_tokens → 400 param max_tokens', async () => {
    const r = await send('/v1/messages', { model: 'claude-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).toBe(400);
    expect(r.body.error?.param).toBe('max_tokens');
  });
  test('a JSON array body → 400', async () => {
    expect((await send('/v1/chat/completions', [1, 2])).status).toBe(400);
  });
  test('nothing reaches the upstream for a rejected request', async () => {
    const before = oa.requests.length;
    await send('/v1/chat/completions', { model: 'gpt-mini', messages: 'nope' });
    expect(oa.requests.length).toBe(before);
  });
});

describe('endpoints and ids', () => {
  test('unknown endpoint → 404 not_found_error unknown_endpoint with X-Request-ID', async () => {
    expectError(await send('/v1/nope', {}), 404, 'not_found_error', 'unknown_endpoint');
    expectError(await send('/not-even-v1', {}, {}, 'GET'), 404, 'not_found_error', 'unknown_endpoint');
  });
  test('/v1/audio/transcriptions → 400 unsupported_endpoint', async () => {
    expectError(await send('/v1/audio/transcriptions', {}), 400, 'invalid_request_error', 'unsupported_endpoint');
  });
  test('X-Request-ID is fresh per response; the client id is echoed as X-Client-Request-ID', async () => {
    const a = await send('/v1/chat/completions', chat('gpt-mini'), { 'x-request-id': 'client-abc' });
    const b = await send('/v1/chat/completions', chat('gpt-mini'));
    expect(a.headers.get('x-request-id')).toMatch(UUID);
    expect(a.headers.get('x-request-id')).not.toBe('client-abc');
    expect(a.headers.get('x-client-request-id')).toBe('client-abc');
    expect(b.headers.get('x-client-request-id')).toBeNull();
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    const e = await send('/v1/chat/completions', chat('no-such-model'), { 'x-client-request-id': 'client-err' });
    expect(e.headers.get('x-client-request-id')).toBe('client-err');
  });
  test('healthz on both listeners', async () => {
    expect(await (await fetch(`${tg.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${tg.adminUrl}/healthz`)).json()).toEqual({ status: 'ok' });
  });
});

describe('GET /v1/models', () => {
  test("lists the key's routable models with the seed's fields, prices as plain decimals", async () => {
    const res = await fetch(`${tg.url}/v1/models`, { headers: { authorization: `Bearer ${p.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(UUID);
    const body = (await res.json()) as { object: string; data: Record<string, unknown>[] };
    expect(body.object).toBe('list');
    const ids = body.data.map((d) => d.id);
    expect(ids).toContain('gpt-mini');
    expect(ids).toContain('claude-mini');
    expect(ids).not.toContain('unrouted');
    const gpt = body.data.find((d) => d.id === 'gpt-mini');
    expect(gpt).toEqual({
      id: 'gpt-mini',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'openai',
      input_price: '0.00000015',
      caching_price: '0',
      cached_price: '0.000000075',
      output_price: '0.0000006',
      max_output_tokens: 16384,
      context_window: 128000,
      supports_caching: false,
      supports_vision: true,
      supports_computer_use: false,
      supports_reasoning: false,
    });
  });

  test('GET /v1/models/{id} (OpenAI SDK models.retrieve): the listed object, else 404 model_not_found in OpenAI shape', async () => {
    const listed = (await (await fetch(`${tg.url}/v1/models`, { headers: { authorization: `Bearer ${p.apiKey}` } })).json()) as {
      data: { id: string }[];
    };
    const client = new OpenAI({ apiKey: p.apiKey, baseURL: `${tg.url}/v1`, maxRetries: 0 });
    const one = await client.models.retrieve('gpt-mini');
    const entry: unknown = listed.data.find((d) => d.id === 'gpt-mini');
    expect(entry).toBeDefined();
    expect(entry).toEqual(one);
    expect(one.owned_by).toBe('openai');
    // In the catalogue but not routable for this key, and not at all: the same 404.
    for (const id of ['unrouted', 'no-such-model', 'a/b']) {
      const err = await client.models.retrieve(id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err instanceof OpenAI.APIError ? [err.status, err.code, err.type, err.param] : []).toEqual([
        404,
        'model_not_found',
        'not_found_error',
        'model',
      ]);
      expect(err instanceof OpenAI.APIError ? err.message : '').toContain(`'${id}'`);
    }
    const noKey = new OpenAI({ apiKey: 'sk-not-a-real-key-000000000000000000000', baseURL: `${tg.url}/v1`, maxRetries: 0 });
    expect(await noKey.models.retrieve('gpt-mini').catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('user tokens on the inference API', () => {
  test('a user token (JWT from CreateUserToken) authenticates like a key of its project', async () => {
    const created = (await tg.must(admin('CreateUserToken'), {
      customerId: 'acme',
      workspaceId: 'main',
      userId: 'u-42',
      organizationUnit: 'eng',
      role: 'developer',
      scopes: ['inference'],
    })) as { accessToken: string };
    const ok = await send('/v1/chat/completions', chat('gpt-mini'), { authorization: `Bearer ${created.accessToken}` });
    expect(ok.status).toBe(200);
    const models = await send('/v1/models', undefined, { authorization: `Bearer ${created.accessToken}` }, 'GET');
    expect(models.status).toBe(200);
  });
  test('a tampered or foreign JWT → 401 invalid_api_key', async () => {
    const created = (await tg.must(admin('CreateUserToken'), {
      customerId: 'acme',
      workspaceId: 'main',
      userId: 'u-43',
      organizationUnit: 'eng',
      role: 'dev',
    })) as {
      accessToken: string;
    };
    const [h, payload, sig] = created.accessToken.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), customer: 'other' }),
    ).toString('base64url');
    expectError(
      await send('/v1/chat/completions', chat('gpt-mini'), { authorization: `Bearer ${h}.${forged}.${sig}` }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
    expectError(
      await send('/v1/chat/completions', chat('gpt-mini'), { authorization: 'Bearer aaa.bbb.ccc' }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
  });
});
