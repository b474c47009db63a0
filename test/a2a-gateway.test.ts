import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { TaskState } from '@a2a-js/sdk';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { startTestAgent, type TestAgent } from './support/a2a-agent.ts';
import { authedFetch, message, recordOf as recordOfRequest } from './support/a2a-client.ts';

/**
 * The A2A agent gateway (contract §12) with `@a2a-js/sdk` on both sides: an SDK agent registered
 * by its card URL (CreateA2aAgent, AddProjectA2aAgent), an unchanged SDK client pointed at the
 * gateway's `/a2a/{agentId}/` and given only the project's API key.
 */

const SECRET = 'agent-upstream-secret';
let tg: TestGateway;
let agent: TestAgent;
let apiKey = '';
let otherKey = '';
const acme = { customerId: 'acme', projectId: 'default' };
/** Response headers of the client's last call through the gateway. */
let last: Headers = new Headers();
let metricsPort = 0;

const authed = (key: string): typeof fetch =>
  authedFetch(key, (h) => {
    last = h;
  });
const client = (key = apiKey) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authed(key) })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed(key) }),
    }),
  ).createFromUrl(`${tg.url}/a2a/echo/`);

const rpc = (body: unknown, key = apiKey, headers: Record<string, string> = {}) =>
  fetch(`${tg.url}/a2a/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });

const recordOf = (requestId: string) => recordOfRequest(tg, requestId);

beforeAll(async () => {
  agent = startTestAgent('Echo agent', { bearer: SECRET });
  // The A2A limits as an operator sets them (GATEWAY_A2A_*): a short call time-out, a card checked
  // on every call but the first, a small answer bound.
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  metricsPort = s.port ?? 0;
  void s.stop(true);
  tg = await startTestGateway({
    GATEWAY_METRICS_PORT: String(metricsPort),
    GATEWAY_A2A_TIMEOUT: '1s',
    GATEWAY_A2A_CARD_CHECK: '1ms',
    GATEWAY_A2A_MAX_MESSAGE: '64KiB',
  });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('CreateCustomer'), { customerId: 'other', name: 'Other' });
  const key = async (customerId: string) =>
    (
      (await tg.must(apikeyOp('CreateApiKey'), { name: 'a2a', userId: 'u1', enterpriseContext: { customerId, projectId: 'default' } })) as {
        apiKey: string;
      }
    ).apiKey;
  apiKey = await key('acme');
  otherKey = await key('other');
  await tg.must(admin('CreateA2aAgent'), { agentId: 'echo', cardUrl: agent.cardUrl, authType: 'bearer', authValue: SECRET });
  await tg.must(admin('AddProjectA2aAgent'), { ...acme, agentId: 'echo' });
}, 90_000);

afterAll(async () => {
  await tg?.stop();
  await agent?.stop();
});

describe('the SDK client through the gateway', () => {
  test('the card is pinned in the catalog: name, skills, hash, ACTIVE', async () => {
    const { agent: a } = (await tg.must(admin('GetA2aAgent'), { agentId: 'echo' })) as { agent: Record<string, unknown> };
    expect(a).toMatchObject({ name: 'Echo agent', skills: [{ id: 'echo', name: 'Echo' }], state: 'ACTIVE', hasAuthValue: true });
    expect(String(a.cardSha256)).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(a)).not.toContain(SECRET);
  });

  test("the gateway's card names the gateway's URL and bearer, never the agent's address", async () => {
    const res = await fetch(`${tg.url}/a2a/echo/.well-known/agent-card.json`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(agent.url);
    const card = JSON.parse(text);
    expect(card.supportedInterfaces).toEqual([
      { url: `${tg.url}/a2a/echo`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ]);
    expect(card.securitySchemes).toEqual({
      gateway: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'an API key or user token of the project' } },
    });
  });

  test('SendMessage: the agent answers a completed task; it got the catalog credential, traceparent and the correlation id', async () => {
    const c = await client();
    const before = agent.calls.length;
    const result = await c.sendMessage(message('hello there'));
    if (!('id' in result && 'artifacts' in result)) throw new Error('expected a task');
    expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(result.artifacts.map((a) => a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''))).toEqual([
      'echo: hello',
      'echo: there',
    ]);
    const sent = agent.calls.at(-1);
    expect(agent.calls.length).toBe(before + 1);
    expect(sent?.get('authorization')).toBe(`Bearer ${SECRET}`);
    expect(sent?.get('traceparent') ?? '').toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    const correlation = last.get('x-gateway-correlation-id');
    expect(correlation).toBeTruthy();
    expect(sent?.get('x-gateway-correlation-id')).toBe(correlation);
    const record = await recordOf(String(last.get('x-request-id')));
    expect(record).toMatchObject({
      endpoint: '/a2a/echo',
      model: 'SendMessage',
      provider: 'a2a',
      connection: 'echo',
      upstreamModel: result.id,
      httpStatus: 200,
    });
  });

  test('SendStreamingMessage: every event is relayed, the last one completes the task; GetTask reads it back', async () => {
    const c = await client();
    const events: unknown[] = [];
    let taskId = '';
    for await (const ev of c.sendMessageStream(message('one two three'))) {
      events.push(ev);
      if (ev.payload?.$case === 'artifactUpdate') taskId = ev.payload.value.taskId;
    }
    expect(events.length).toBe(5);
    const task = await c.getTask({ id: taskId, historyLength: undefined, tenant: '' });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const record = await recordOf(String(last.get('x-request-id')));
    expect(record).toMatchObject({ model: 'GetTask', upstreamModel: taskId });
  });

  test('CancelTask of a finished task: the agent’s own JSON-RPC error reaches the client', async () => {
    const c = await client();
    const done = await c.sendMessage(message('x'));
    if (!('id' in done)) throw new Error('expected a task');
    await expect(c.cancelTask({ id: done.id, metadata: undefined, tenant: '' })).rejects.toThrow();
  });

  test('v0.3 names: message/send from an older client is relayed and recorded under its name', async () => {
    const res = await rpc({
      jsonrpc: '2.0',
      id: 7,
      method: 'message/send',
      params: { message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'old client' }] } },
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.id).toBe(7);
    expect(JSON.stringify(body.result)).toContain('echo: client');
    expect(await recordOf(String(res.headers.get('x-request-id')))).toMatchObject({ model: 'message/send', endpoint: '/a2a/echo' });
  });
});

describe('metrics', () => {
  test('A2A calls count under gateway_api="a2a", operation invoke_agent, provider a2a: the JSON-RPC method is never a model label', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 11, method: 'GetTask', params: { id: 'none' } }, apiKey, { 'a2a-version': '1.0' });
    await res.text();
    const lines = (await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).split('\n');
    const a2a = lines.filter((l) => l.startsWith('gateway_requests_total{') && l.includes('gateway_api="a2a"'));
    expect(a2a.length).toBeGreaterThan(0);
    for (const l of a2a) {
      expect(l).toContain('gen_ai_operation_name="invoke_agent"');
      expect(l).toContain('gen_ai_provider_name="a2a"');
      expect(l).toContain('gen_ai_request_model="other"');
    }
    expect(a2a.some((l) => l.includes('status_code="200"') && l.includes('project="acme/default"'))).toBe(true);
    expect(lines.some((l) => l.startsWith('gen_ai_server_request_duration_seconds_count{') && l.includes('invoke_agent'))).toBe(true);
    // No series anywhere names an A2A method as a model, nor files an A2A call under another API.
    for (const method of ['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'message/send'])
      expect(lines.some((l) => l.includes(`gen_ai_request_model="${method}"`))).toBe(false);
    expect(
      lines.some(
        (l) => l.includes('gen_ai_provider_name="a2a"') && l.startsWith('gateway_requests_total{') && !l.includes('gateway_api="a2a"'),
      ),
    ).toBe(false);
  });
});

describe('callers', () => {
  test('no key → 401 with WWW-Authenticate: Bearer, in the JSON-RPC error shape (id null: the body of an unknown caller is not read); the agent is not called', async () => {
    const before = agent.calls.length;
    const res = await fetch(`${tg.url}/a2a/echo`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32603, data: { code: 'invalid_api_key' } } });
    expect(agent.calls.length).toBe(before);
  });

  test("another project's key → 404 a2a_agent_not_found (card and calls)", async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'x' } }, otherKey);
    expect(res.status).toBe(404);
    expect((await res.json()).error.data.code).toBe('a2a_agent_not_found');
    const card = await fetch(`${tg.url}/a2a/echo/.well-known/agent-card.json`, { headers: { authorization: `Bearer ${otherKey}` } });
    expect(card.status).toBe(404);
  });

  test('not JSON-RPC → -32600 (400), not JSON → -32700', async () => {
    const bad = await rpc({ hello: 1 });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe(-32600);
    const notJson = await fetch(`${tg.url}/a2a/echo`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: '{nope' });
    expect((await notJson.json()).error.code).toBe(-32700);
  });
});

describe('an agent that misbehaves', () => {
  const send = {
    jsonrpc: '2.0',
    id: 3,
    method: 'SendMessage',
    params: { message: { role: 'ROLE_USER', messageId: 'm', parts: [{ text: 'hi' }] } },
  };

  test('garbage → 502 bad_gateway as a JSON-RPC error, recorded once with that status', async () => {
    agent.mode = 'garbage';
    try {
      const res = await rpc(send, apiKey, { 'a2a-version': '1.0' });
      expect(res.status).toBe(502);
      const body = await res.json();
      expect(body).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32603, data: { code: 'bad_gateway' } } });
      expect(await recordOf(String(res.headers.get('x-request-id')))).toMatchObject({ httpStatus: 502, errorCode: 'bad_gateway' });
    } finally {
      agent.mode = 'normal';
    }
  });

  test('a hanging agent → 504 upstream_timeout after GATEWAY_A2A_TIMEOUT (1s here)', async () => {
    agent.mode = 'hang';
    try {
      const t0 = performance.now();
      const res = await rpc(send, apiKey, { 'a2a-version': '1.0' });
      expect(res.status).toBe(504);
      expect((await res.json()).error.data.code).toBe('upstream_timeout');
      const ms = performance.now() - t0;
      expect(ms).toBeGreaterThanOrEqual(950);
      expect(ms).toBeLessThan(5_000);
    } finally {
      agent.mode = 'normal';
    }
  });

  test('an answer over GATEWAY_A2A_MAX_MESSAGE (64KiB here) → 502 bad_gateway naming the setting; a smaller one passes', async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`.padEnd(2_000, 'x')).join(' ');
    const big = await rpc({ ...send, params: { message: { ...send.params.message, parts: [{ text: words(40) }] } } }, apiKey, {
      'a2a-version': '1.0',
    });
    expect(big.status).toBe(502);
    const body = await big.json();
    expect(body.error.data.code).toBe('bad_gateway');
    expect(body.error.message).toContain('GATEWAY_A2A_MAX_MESSAGE');
    expect(await recordOf(String(big.headers.get('x-request-id')))).toMatchObject({ httpStatus: 502, errorCode: 'bad_gateway' });
    const small = await rpc({ ...send, params: { message: { ...send.params.message, parts: [{ text: words(3) }] } } }, apiKey, {
      'a2a-version': '1.0',
    });
    expect(small.status).toBe(200);
  });

  test('a stream that breaks → the events so far, then a JSON-RPC error event; recorded as 502', async () => {
    agent.mode = 'break';
    try {
      const res = await rpc({ ...send, method: 'SendStreamingMessage' }, apiKey, { 'a2a-version': '1.0', accept: 'text/event-stream' });
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const events = (await res.text())
        .split('\n\n')
        .filter((e) => e.startsWith('data: '))
        .map((e) => JSON.parse(e.slice(6)));
      expect(events.length).toBe(3);
      expect(events.slice(0, 2).every((e) => 'result' in e)).toBe(true);
      expect(events[2]).toMatchObject({ id: 3, error: { code: -32603, data: { code: 'a2a_upstream_error' } } });
      expect(await recordOf(String(res.headers.get('x-request-id')))).toMatchObject({ httpStatus: 502, stream: true });
    } finally {
      agent.mode = 'normal';
    }
  });
});

describe('governance', () => {
  test("an input guardrail reads the message's text parts: a blocked word never reaches the agent", async () => {
    await tg.must(admin('CreateGuardrail'), {
      ...acme,
      name: 'no-secrets',
      stage: 'input',
      kind: 'regex',
      pattern: 'classified',
      action: 'block',
    });
    try {
      const before = agent.calls.length;
      const c = await client();
      await expect(c.sendMessage(message('this is classified'))).rejects.toThrow(/no-secrets|guardrail/i);
      expect(agent.calls.length).toBe(before);
    } finally {
      await tg.must(admin('DeleteGuardrail'), { ...acme, name: 'no-secrets' });
    }
  });

  test('an output guardrail redacts the text parts of the answer and of streamed artifacts', async () => {
    await tg.must(admin('CreateGuardrail'), { ...acme, name: 'mask', stage: 'output', kind: 'regex', pattern: 'banana', action: 'redact' });
    try {
      const c = await client();
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
});

describe('the pin, and removal', () => {
  test('a changed card (checked every GATEWAY_A2A_CARD_CHECK): the agent answers 503 naming the drift, GetA2aAgent says DRIFTED; RefreshA2aAgent serves it again', async () => {
    agent.swapCard('a swapped card');
    const send = () => rpc({ jsonrpc: '2.0', id: 9, method: 'GetTask', params: { id: 'none' } }, apiKey, { 'a2a-version': '1.0' });
    let res = await send();
    for (let i = 0; i < 20 && res.status !== 503; i++) {
      await Bun.sleep(50);
      res = await send();
    }
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.error.data.code).toBe('a2a_agent_drifted');
    expect(body.error.message).toContain('RefreshA2aAgent');
    expect(((await tg.must(admin('GetA2aAgent'), { agentId: 'echo' })) as { agent: { state: string } }).agent.state).toBe('DRIFTED');
    await tg.must(admin('RefreshA2aAgent'), { agentId: 'echo' });
    expect((await send()).status).not.toBe(503);
  });

  test('DeleteA2aAgent while assigned is failed_precondition; after RemoveProjectA2aAgent calls answer 404', async () => {
    const del = await tg.call(admin('DeleteA2aAgent'), { agentId: 'echo' });
    expect(del.status).toBe(400);
    expect(String(del.body.message)).toContain('acme/default');
    await tg.must(admin('RemoveProjectA2aAgent'), { ...acme, agentId: 'echo' });
    const res = await rpc({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } });
    expect(res.status).toBe(404);
    await tg.must(admin('AddProjectA2aAgent'), { ...acme, agentId: 'echo' });
  });
});
