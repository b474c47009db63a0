import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { SEALED_PATTERN } from '../src/api/config-document.ts';
import type { DataNode } from '../src/app-data.ts';
import { serviceAccounts } from '../src/store/schema/index.ts';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import { startSeparatePlane } from './support/data-node.ts';
import { eventually, type OtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.ts';
import { admin } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 25, item 4: a separate data plane (`--role data`, in process, real listeners) exports its
 * traces and OTLP metrics to its service account's `dataExports.telemetry` — endpoint, headers,
 * protocol, local variables — with no OTEL_* variable in its environment; the settings travel in
 * its pulled document with the header values and local variables sealed (its config-cache.json
 * holds none in plaintext); a change of the account's settings reaches the running data plane with
 * the next pull (no redeploy); an OTLP endpoint in the data plane's own environment wins.
 */

let w: World;
let dir: string;
let otlp: OtlpReceiver;
let other: OtlpReceiver;
const nodes: DataNode[] = [];
const lines: string[] = [];

const OTLP_TOKEN = 'otlp-bearer-5e1d0c77ab';
const TENANT = 'tenant-secret-9f3a21';
const BOGUS = 'bogus-value-c0ffee42';
const forms = (s: string): string[] => [
  s,
  Buffer.from(s).toString('base64'),
  Buffer.from(s).toString('base64url'),
  Buffer.from(s).toString('hex'),
];
const filesUnder = (root: string): string[] =>
  readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(root, e.name)) : [join(root, e.name)]));

const plane = async (name: string, account: Record<string, unknown>, env: Record<string, string> = {}): Promise<DataNode> => {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  const node = await startSeparatePlane(w.tg, d, 'acme', 'edge', '100ms', account, env);
  nodes.push(node);
  return node;
};

/** One chat request through `node`; its request id. */
const chat = async (node: DataNode): Promise<string> => {
  const r = await fetch(`${node.inferenceUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.text();
  expect(r.status).toBe(200);
  return r.headers.get('x-request-id') ?? '';
};
const serverSpan = (rx: OtlpReceiver, requestId: string) =>
  rx.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === requestId);

beforeAll(async () => {
  // Another file may have left the level at error: this one reads warnings.
  setLogLevel('info');
  setLogSink((line) => void lines.push(line));
  dir = mkdtempSync(join(tmpdir(), 'gw-dpexp-'));
  otlp = startOtlpReceiver();
  other = startOtlpReceiver();
  w = await startWorld();
  await w.tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'default' });
}, 60_000);

afterAll(async () => {
  for (const n of nodes) await n.stop(0);
  await stopWorld(w);
  otlp.stop();
  other.stop();
  setLogSink(undefined);
  setLogLevel('error');
  rmSync(dir, { recursive: true, force: true });
});

describe("a separate data plane exports to its service account's dataExports.telemetry", () => {
  let node: DataNode;

  test('spans of an inference request reach the endpoint over http/protobuf, with the headers and the honoured local variables', async () => {
    node = await plane('a', {
      telemetryEndpoint: `${otlp.url}/`,
      telemetryHeaders: { authorization: `Bearer ${OTLP_TOKEN}` },
      telemetryProtocol: 'http/protobuf',
      telemetryTimeout: '5s',
      telemetryLocalVars: {
        OTEL_SERVICE_NAME: 'edge-plane',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=staging',
        OTEL_EXPORTER_OTLP_HEADERS: `x-otlp-tenant=${TENANT}`,
        OTEL_BOGUS_SETTING: BOGUS,
      },
    });
    const requestId = await chat(node);
    const span = await eventually(() => serverSpan(otlp, requestId));
    expect(span.name).toBe('chat gpt-mini');
    expect(span.resource).toMatchObject({ 'service.name': 'edge-plane', 'deployment.environment': 'staging' });
    const traces = otlp.requests.filter((r) => r.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    for (const r of traces) {
      expect(r.headers.get('authorization')).toBe(`Bearer ${OTLP_TOKEN}`);
      expect(r.headers.get('x-otlp-tenant')).toBe(TENANT);
      expect(r.headers.get('content-type')).toBe('application/x-protobuf');
    }
    // A local variable the data plane does not honour is logged by name, once, never by value.
    const bogus = lines.filter((l) => l.includes('OTEL_BOGUS_SETTING'));
    expect(bogus).toHaveLength(1);
    expect(lines.filter((l) => [BOGUS, TENANT, OTLP_TOKEN].some((s) => l.includes(s)))).toEqual([]);
  }, 30_000);

  test('its config-cache.json (and every file of GATEWAY_DATA_DIR) holds no header value or local variable in plaintext', () => {
    const dataDir = join(dir, 'a', 'node');
    const cache = JSON.parse(readFileSync(join(dataDir, 'config-cache.json'), 'utf8')) as {
      document: { dataExports?: { telemetry: Record<string, unknown> } };
    };
    const t = cache.document.dataExports?.telemetry;
    expect(t?.endpoint).toBe(`${otlp.url}/`);
    expect(String(t?.headers)).toMatch(new RegExp(SEALED_PATTERN));
    expect(String(t?.localVars)).toMatch(new RegExp(SEALED_PATTERN));
    for (const f of filesUnder(dataDir)) {
      const text = readFileSync(f).toString('latin1');
      expect({ file: f, leaked: [OTLP_TOKEN, TENANT, BOGUS].filter((s) => forms(s).some((x) => text.includes(x))) }).toEqual({
        file: f,
        leaked: [],
      });
    }
  });

  test('a change of the account’s settings reaches the running data plane with its next pull (no redeploy)', async () => {
    // No operation updates a service account's telemetry yet: the row is changed as one would, and a full pull (a drift sweep) brings it.
    const [row] = await w.tg.gw.store.db.select().from(serviceAccounts).where(eq(serviceAccounts.kid, node.account.privateKeyId));
    expect(row).toBeDefined();
    await w.tg.gw.store.db
      .update(serviceAccounts)
      .set({ telemetry: { ...row?.telemetry, endpoint: other.url, protocol: 'http/json', headers: { authorization: 'Bearer rotated' } } })
      .where(eq(serviceAccounts.kid, node.account.privateKeyId));
    await node.controller.pull(true);
    const requestId = await chat(node);
    const span = await eventually(() => serverSpan(other, requestId));
    expect(span.resource['service.name']).toBe('edge-plane');
    const traces = other.requests.filter((r) => r.path === '/v1/traces');
    expect(
      traces.every((r) => r.headers.get('authorization') === 'Bearer rotated' && (r.headers.get('content-type') ?? '').includes('json')),
    ).toBe(true);
    await Bun.sleep(700);
    expect(serverSpan(otlp, requestId)).toBeUndefined();
  }, 30_000);

  test('its OTLP metrics reach the endpoint too (the last collection is exported at stop)', async () => {
    const before = other.requests.filter((r) => r.path === '/v1/metrics').length;
    await node.stop(0);
    const metrics = other.requests.filter((r) => r.path === '/v1/metrics');
    expect(metrics.length).toBeGreaterThan(before);
    expect(metrics.at(-1)?.headers.get('authorization')).toBe('Bearer rotated');
    const requests = other.points.filter((p) => p.metric === 'gateway.requests');
    expect(requests.reduce((n, p) => n + p.value, 0)).toBeGreaterThanOrEqual(2);
  }, 30_000);

  test('an OTLP endpoint in the data plane’s own environment wins over the account’s', async () => {
    const envWins = await plane(
      'b',
      { telemetryEndpoint: otlp.url, telemetryHeaders: { authorization: `Bearer ${OTLP_TOKEN}` }, telemetryProtocol: 'http/protobuf' },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: other.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    );
    const seen = other.requests.length;
    const requestId = await chat(envWins);
    await eventually(() => serverSpan(other, requestId));
    expect(other.requests.slice(seen).every((r) => r.headers.get('authorization') === null)).toBe(true);
    await Bun.sleep(700);
    expect(serverSpan(otlp, requestId)).toBeUndefined();
  }, 30_000);
});
