import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import { eventually, type OtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * One door for every endpoint (src/pipeline/door.ts): the small endpoints — `/v1/models`,
 * count-tokens, stored responses, conversations, files, batches — enter through it like inference
 * does, so each request of each of them gives the observers the same events: a SERVER span
 * (named `{method} {path}`, ids as `{id}`), the request metrics (`gen_ai_operation_name` `other`)
 * and a request record. Before the door they were neither traced, counted nor recorded.
 */

let world: World | undefined;
let tg: TestGateway;
let p: Provisioned;
let otlp: OtlpReceiver;
let metricsUrl: string;

const freePort = (): number => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = s.port ?? 0;
  void s.stop(true);
  return port;
};

beforeAll(async () => {
  otlp = startOtlpReceiver();
  const port = freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  world = await startWorld({
    GATEWAY_METRICS_PORT: String(port),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  });
  ({ tg, p } = world);
}, 60_000);

afterAll(async () => {
  await stopWorld(world);
  otlp.stop();
});

/** `gateway_requests_total` of the endpoints that are no GenAI operation, with this status. */
const otherRequests = async (status: number): Promise<number> => {
  const text = await (await fetch(metricsUrl)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('gateway_requests_total{')) continue;
    if (line.includes('gen_ai_operation_name="other"') && line.includes(`status_code="${status}"`))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
};

/** The request record found by `query`, once written. */
const recordOf = async (query: Record<string, string>): Promise<Record<string, unknown>> => {
  for (let i = 0; i < 100; i++) {
    const found = (await tg.must(admin('SearchRequestRecords'), query)) as { records: Record<string, unknown>[] };
    if (found.records[0]) return found.records[0];
    await Bun.sleep(100);
  }
  throw new Error(`no record for ${JSON.stringify(query)}`);
};

interface Case {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  path: string;
  body?: unknown;
  status: number;
}

const CASES: Case[] = [
  { name: '/v1/models', method: 'GET', url: '/v1/models', path: '/v1/models', status: 200 },
  {
    name: 'count-tokens',
    method: 'POST',
    url: '/v1/messages/count_tokens',
    path: '/v1/messages/count_tokens',
    body: { model: 'gpt-mini', messages: [{ role: 'user', content: 'count me' }] },
    status: 200,
  },
  { name: 'stored responses', method: 'GET', url: '/v1/responses/resp_unknown', path: '/v1/responses/{id}', status: 404 },
  { name: 'conversations', method: 'POST', url: '/v1/conversations', path: '/v1/conversations', body: { items: [] }, status: 200 },
  { name: 'files', method: 'GET', url: '/v1/files', path: '/v1/files', status: 200 },
  { name: 'batches', method: 'GET', url: '/v1/batches/batch_unknown', path: '/v1/batches/{id}', status: 404 },
];

describe('every endpoint goes through the door: a span, a metric and a record per request', () => {
  for (const c of CASES) {
    test(`${c.name}: ${c.method} ${c.url} → ${c.status}`, async () => {
      const before = await otherRequests(c.status);
      const res = await fetch(`${tg.url}${c.url}`, {
        method: c.method,
        headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': `door-${c.name}` },
        ...(c.body === undefined ? {} : { body: JSON.stringify(c.body) }),
      });
      expect(res.status).toBe(c.status);
      await res.arrayBuffer();
      const requestId = res.headers.get('x-request-id') ?? '';
      expect(requestId).not.toBe('');

      // The metric: one more request of an endpoint that is no GenAI operation, with its status.
      expect(await otherRequests(c.status)).toBe(before + 1);

      // The span: the request's SERVER span, named by method and path, with the caller and the status.
      const span = await eventually(() => otlp.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === requestId));
      expect(span.name).toBe(`${c.method} ${c.path}`);
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'other',
        'http.request.method': c.method,
        'url.path': c.path,
        'http.response.status_code': c.status,
        'gateway.client_request_id': `door-${c.name}`,
        'gateway.api_key_id': p.keyId,
        'gateway.project_id': 'default',
      });

      // The record: found by the request id, with the endpoint's path, the caller and the status.
      const record = await recordOf({ requestId });
      expect(record).toMatchObject({
        endpoint: c.path,
        httpStatus: c.status,
        apiKeyId: p.keyId,
        customerId: 'acme',
        clientRequestId: `door-${c.name}`,
      });
    });
  }

  test('a refused caller is observed too: 401 with a span, a metric and a record without a caller', async () => {
    const before = await otherRequests(401);
    const res = await fetch(`${tg.url}/v1/models`, { headers: { authorization: 'Bearer sk-not-a-key', 'x-request-id': 'door-401' } });
    expect(res.status).toBe(401);
    const requestId = res.headers.get('x-request-id') ?? '';
    expect(await otherRequests(401)).toBe(before + 1);
    const span = await eventually(() => otlp.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === requestId));
    expect(span.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': 'invalid_api_key' });
    expect(await recordOf({ clientRequestId: 'door-401' })).toMatchObject({
      endpoint: '/v1/models',
      httpStatus: 401,
      apiKeyId: '',
      errorCode: 'invalid_api_key',
    });
  });
});
