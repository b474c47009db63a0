import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, RestTransportFactory } from '@a2a-js/sdk/client';
import { startTestAgent, type TestAgent } from './support/a2a-agent.ts';
import { authedFetch, message, recordOf } from './support/a2a-client.ts';
import { type RestBinding, startRestBinding } from './support/a2a-rest-agent.js';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * A2A's HTTP+JSON binding through the gateway (contract §12): an SDK agent serving JSON-RPC and
 * the SDK's own `restHandler` on one request handler, an SDK client built with
 * `RestTransportFactory` only from the gateway's card, given only the project's API key.
 */

const SECRET = 'rest-agent-upstream-secret';
let tg: TestGateway;
let agent: TestAgent;
let rest: RestBinding;
let plain: TestAgent;
let apiKey = '';
let last: Headers = new Headers();
const acme = { customerId: 'acme', projectId: 'default' };

const restClient = (agentId = 'both', key = apiKey) => {
  const f = authedFetch(key, (h) => {
    last = h;
  });
  // Not `ClientFactoryOptions.createFrom`: it merges with the default transports (JSON-RPC would stay).
  return new ClientFactory({
    ...ClientFactoryOptions.default,
    transports: [new RestTransportFactory({ fetchImpl: f })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: f }),
  }).createFromUrl(`${tg.url}/a2a/${agentId}/`);
};

const post = (path: string, body: unknown, key = apiKey) =>
  fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });

const wireSend = (text: string) => ({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }] } });

beforeAll(async () => {
  rest = await startRestBinding(() => agent.requests(), SECRET);
  agent = startTestAgent('Both bindings', { bearer: SECRET, restUrl: rest.url });
  plain = startTestAgent('JSON-RPC only');
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  apiKey = (
    (await tg.must(apikeyOp('CreateApiKey'), { name: 'a2a', userId: 'u1', enterpriseContext: acme })) as {
      apiKey: string;
    }
  ).apiKey;
  await tg.must(admin('CreateA2aAgent'), { agentId: 'both', cardUrl: agent.cardUrl, authType: 'bearer', authValue: SECRET });
  await tg.must(admin('CreateA2aAgent'), { agentId: 'plain', cardUrl: plain.cardUrl });
  await tg.must(admin('AddProjectA2aAgent'), { ...acme, agentId: 'both' });
  await tg.must(admin('AddProjectA2aAgent'), { ...acme, agentId: 'plain' });
}, 90_000);

afterAll(async () => {
  await tg?.stop();
  await agent?.stop();
  await plain?.stop();
  await rest?.stop();
});

describe('the SDK REST client through the gateway', () => {
  test("the gateway's card lists JSON-RPC first, then HTTP+JSON at /a2a/{agentId}/v1; never the agent's address", async () => {
    const res = await fetch(`${tg.url}/a2a/both/.well-known/agent-card.json`, { headers: { authorization: `Bearer ${apiKey}` } });
    const text = await res.text();
    expect(text).not.toContain(rest.url);
    expect(JSON.parse(text).supportedInterfaces).toEqual([
      { url: `${tg.url}/a2a/both`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${tg.url}/a2a/both/v1`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ]);
  });

  test('message:send reaches the agent over HTTP+JSON with the catalog credential; recorded as SendMessage with the task id', async () => {
    const c = await restClient();
    const before = rest.calls.length;
    const result = await c.sendMessage(message('hello rest'));
    if (!('id' in result && 'artifacts' in result)) throw new Error('expected a task');
    expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(JSON.stringify(result.artifacts)).toContain('echo: rest');
    const sent = rest.calls.slice(before);
    expect(sent.map((x) => [x.method, x.path, x.authorization])).toEqual([['POST', '/message:send', `Bearer ${SECRET}`]]);
    expect(sent[0]?.traceparent ?? '').toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(last.get('x-gateway-correlation-id')).toBeTruthy();
    expect(sent[0]?.correlation).toBe(last.get('x-gateway-correlation-id'));
    expect(await recordOf(tg, String(last.get('x-request-id')))).toMatchObject({
      endpoint: '/a2a/both',
      model: 'SendMessage',
      provider: 'a2a',
      connection: 'both',
      upstreamModel: result.id,
      httpStatus: 200,
    });
  });

  test('message:stream relays every event (SSE); tasks/{id} reads the task back; both recorded by method', async () => {
    const c = await restClient();
    const events: unknown[] = [];
    let taskId = '';
    for await (const ev of c.sendMessageStream(message('one two three'))) {
      events.push(ev);
      if (ev.payload?.$case === 'artifactUpdate') taskId = ev.payload.value.taskId;
    }
    expect(events.length).toBe(5);
    expect(await recordOf(tg, String(last.get('x-request-id')))).toMatchObject({ model: 'SendStreamingMessage', upstreamModel: taskId });
    const task = await c.getTask({ id: taskId, historyLength: undefined, tenant: '' });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await recordOf(tg, String(last.get('x-request-id')))).toMatchObject({ model: 'GetTask', upstreamModel: taskId });
  });

  test("tasks/{id}:cancel goes to the agent; its own refusal (a finished task) reaches the client as the SDK's error", async () => {
    const c = await restClient();
    const done = await c.sendMessage(message('x'));
    if (!('id' in done)) throw new Error('expected a task');
    const before = rest.calls.length;
    const err = await c.cancelTask({ id: done.id, metadata: undefined, tenant: '' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err instanceof Error ? err.name : '').toBe('TaskNotCancelableError');
    expect(rest.calls.slice(before).map((x) => `${x.method} ${x.path}`)).toEqual([`POST /tasks/${done.id}:cancel`]);
    expect(await recordOf(tg, String(last.get('x-request-id')))).toMatchObject({ model: 'CancelTask', httpStatus: 400 });
  });
});

describe('the door', () => {
  test('no key → 401 in the REST error shape with WWW-Authenticate: Bearer; the agent is not called', async () => {
    const before = rest.calls.length;
    const res = await post('/a2a/both/v1/message:send', wireSend('hi'), '');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED', details: [{ reason: 'invalid_api_key' }] } });
    expect(rest.calls.length).toBe(before);
  });

  test("an input guardrail blocks the message's text before the agent, in the REST error shape; the SDK client throws", async () => {
    await tg.must(admin('CreateGuardrail'), {
      ...acme,
      name: 'no-secrets',
      stage: 'input',
      kind: 'regex',
      pattern: 'classified',
      action: 'block',
    });
    try {
      const before = rest.calls.length;
      const res = await post('/a2a/both/v1/message:send', wireSend('this is classified'));
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: number; status: string; message: string } };
      expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expect(body.error.message).toMatch(/no-secrets|guardrail/i);
      const c = await restClient();
      await expect(c.sendMessage(message('classified again'))).rejects.toThrow(/no-secrets|guardrail/i);
      expect(rest.calls.length).toBe(before);
    } finally {
      await tg.must(admin('DeleteGuardrail'), { ...acme, name: 'no-secrets' });
    }
  });

  test('an output guardrail redacts the answer and the streamed events', async () => {
    await tg.must(admin('CreateGuardrail'), { ...acme, name: 'mask', stage: 'output', kind: 'regex', pattern: 'banana', action: 'redact' });
    try {
      const c = await restClient();
      const result = await c.sendMessage(message('banana split'));
      expect(JSON.stringify(result)).not.toContain('banana');
      expect(JSON.stringify(result)).toContain('[REDACTED:mask]');
      const events: unknown[] = [];
      for await (const ev of c.sendMessageStream(message('banana'))) events.push(ev);
      expect(JSON.stringify(events)).not.toContain('banana');
    } finally {
      await tg.must(admin('DeleteGuardrail'), { ...acme, name: 'mask' });
    }
  });

  test('an agent whose card lists no HTTP+JSON interface: the REST path is refused (400, REST shape) and its card lists JSON-RPC only', async () => {
    const before = plain.calls.length;
    const res = await post('/a2a/plain/v1/message:send', wireSend('hi'));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { status: string; message: string } };
    expect(body.error.status).toBe('UNIMPLEMENTED');
    expect(body.error.message).toContain('offers no HTTP+JSON interface');
    expect(plain.calls.length).toBe(before);
    const card = await (
      await fetch(`${tg.url}/a2a/plain/.well-known/agent-card.json`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json();
    expect(card.supportedInterfaces.map((i: { protocolBinding: string }) => i.protocolBinding)).toEqual(['JSONRPC']);
    await expect(restClient('plain')).rejects.toThrow();
  });

  test('a path that is no HTTP+JSON operation → 404 NOT_FOUND in the REST shape', async () => {
    const res = await post('/a2a/both/v1/tasks/t1:frobnicate', {});
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  });
});
