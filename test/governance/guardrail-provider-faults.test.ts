import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { setLogLevel, setLogSink } from '../../src/core/log.ts';
import { auditLogs, guardrails, requestRecords } from '../../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockVendors, startMockVendors, VENDOR_KEY } from '../support/mock-guardrail-vendors.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { freePort } from '../support/throwaway-pg.ts';
import { chat, meteredWorld, type World } from './support.ts';

/**
 * Provider guardrails (contract §15) when the vendor fails — down, slow, answering garbage, 429,
 * refusing the credential — the guardrail's fail mode decides (closed refuses, open lets through),
 * the log names the guardrail and why, the decision is on the record; and the management API's
 * rules: clear errors at save, the credential never returned or audited.
 */
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let v: MockVendors;
let w: World;
let metricsPort: number;
const logs: string[] = [];
const at = () => ({ customerId: w.customerId, projectId: w.projectId });
const SECRET = 'lakera-key-never-shown';

beforeAll(async () => {
  // The faults are logged at warn: whatever level a test file before this one left.
  setLogLevel('warn');
  setLogSink((line) => void logs.push(line));
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  v = startMockVendors();
  metricsPort = await freePort();
  tg = await startTestGateway({
    GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
    GATEWAY_LOG_LEVEL: 'warn',
    GATEWAY_METRICS_PORT: String(metricsPort),
  });
  w = await meteredWorld(tg, oa.url, an.url);
}, 60_000);

afterAll(async () => {
  setLogSink(undefined);
  setLogLevel('error');
  await tg?.stop();
  oa?.stop();
  an?.stop();
  v?.stop();
});

const record = async (r: Response) => {
  const id = r.headers.get('x-request-id') ?? '';
  await tg.gw.records.flush();
  const [rec] = await tg.gw.store.db.select().from(requestRecords).where(eq(requestRecords.requestId, id));
  return JSON.parse(rec?.guardrails ?? '[]') as { name: string; stage: string; action: string }[];
};

const ask = (text: string) => chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: text }] });

describe('faults: the fail mode decides', () => {
  const cases = [
    { fault: 'down', reason: 'unreachable' },
    { fault: 'slow', reason: 'no answer within 300 ms' },
    { fault: 'garbage', reason: 'not JSON' },
    { fault: '429', reason: 'rate limited (429)' },
    { fault: 'bad-auth', reason: 'HTTP 401' },
  ] as const;

  test.each(cases)('$fault: input fails closed by default (400 naming the guardrail), open when set; logged with the reason', async (c) => {
    const port = await freePort();
    const url = c.fault === 'down' ? `http://127.0.0.1:${port}` : v.url;
    const authValue = c.fault === 'bad-auth' ? 'wrong-key' : VENDOR_KEY;
    const name = `f-${c.fault}`;
    await tg.must(admin('CreateGuardrail'), {
      ...at(),
      name,
      stage: 'input',
      kind: 'lakera',
      action: 'block',
      timeoutMs: 300,
      provider: { url, authValue },
    });
    v.fault = c.fault === 'slow' || c.fault === 'garbage' || c.fault === '429' ? c.fault : undefined;
    logs.length = 0;
    const t0 = performance.now();
    const closed = await ask('hello');
    expect(closed.status).toBe(400);
    const body = await closed.text();
    expect(body).toContain('guardrail_blocked');
    expect(body).toContain(`the guardrail '${name}' could not be checked`);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect((await record(closed)).find((d) => d.name === name)?.action).toBe('fail_closed');
    const line = logs.find((l) => l.includes(name));
    expect(line).toContain(c.reason);
    expect(logs.join('')).not.toContain(authValue);
    await tg.must(admin('UpdateGuardrail'), { ...at(), name, failMode: 'open' });
    const open = await ask('hello');
    expect(open.status).toBe(200);
    expect((await record(open)).find((d) => d.name === name)?.action).toBe('fail_open');
    v.fault = undefined;
    await tg.must(admin('DeleteGuardrail'), { ...at(), name });
  });

  test('output fails open by default: the answer is delivered when the vendor answers 429', async () => {
    await tg.must(admin('CreateGuardrail'), {
      ...at(),
      name: 'out-429',
      stage: 'output',
      kind: 'openai_moderation',
      action: 'block',
      provider: { url: `${v.url}/v1`, authValue: VENDOR_KEY },
    });
    v.fault = '429';
    const r = await ask('hello');
    v.fault = undefined;
    expect(r.status).toBe(200);
    expect((await record(r)).find((d) => d.name === 'out-429')).toMatchObject({ stage: 'output', action: 'fail_open' });
    await tg.must(admin('DeleteGuardrail'), { ...at(), name: 'out-429' });
  });

  test('flag: a vendor block is recorded, the request served', async () => {
    await tg.must(admin('CreateGuardrail'), {
      ...at(),
      name: 'watch',
      stage: 'input',
      kind: 'lakera',
      action: 'flag',
      provider: { url: v.url, authValue: VENDOR_KEY },
    });
    const r = await ask('inject-lakera please');
    expect(r.status).toBe(200);
    expect((await record(r)).find((d) => d.name === 'watch')?.action).toBe('flag');
    await tg.must(admin('DeleteGuardrail'), { ...at(), name: 'watch' });
  });
});

test('gateway_guardrail_duration_seconds counts each decision by kind and outcome', async () => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const count = (kind: string, outcome: string): number =>
    Number(
      new RegExp(`gateway_guardrail_duration_seconds_count\\{[^}]*kind="${kind}",outcome="${outcome}"[^}]*\\} (\\d+)`).exec(text)?.[1] ?? 0,
    );
  // Five faults each failed closed once and open once (lakera); the output one failed open (openai_moderation); one flag.
  expect(count('lakera', 'fail_closed')).toBe(5);
  expect(count('lakera', 'fail_open')).toBe(5);
  expect(count('openai_moderation', 'fail_open')).toBe(1);
  expect(count('lakera', 'flag')).toBe(1);
  expect(text).toContain('# TYPE gateway_guardrail_duration_seconds histogram');
});

describe('management', () => {
  const refused = async (body: Record<string, unknown>, field: string, words: string) => {
    const r = await tg.call(admin('CreateGuardrail'), { ...at(), name: 'bad', stage: 'input', action: 'block', ...body });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain(field);
    expect(JSON.stringify(r.body)).toContain(words);
  };

  test('clear errors at save, naming the field', async () => {
    await refused({ kind: 'lakera' }, 'provider', 'required for kind');
    await refused({ kind: 'lakera', provider: { url: v.url } }, 'provider.authValue', 'needs a credential');
    await refused({ kind: 'webhook', provider: {} }, 'provider.url', "required for kind 'webhook'");
    await refused(
      { kind: 'bedrock_guardrail', provider: { authValue: 'k', options: { region: 'us-east-1' } } },
      'provider.options.guardrailIdentifier',
      'required',
    );
    await refused(
      { kind: 'azure_content_safety', provider: { url: v.url, authValue: 'k', options: { severityThreshold: 9 } } },
      'provider.options.severityThreshold',
      '0..7',
    );
    await refused({ kind: 'presidio', provider: { url: v.url, options: { colour: 'red' } } }, 'provider.options.colour', 'unknown');
    await refused({ kind: 'presidio', action: 'redact', provider: { url: v.url } }, 'action', 'block');
    await refused({ kind: 'openai_moderation', provider: { connectionId: 'nope' } }, 'provider.connectionId', "no connection 'nope'");
    await refused({ kind: 'regex', pattern: 'x', timeoutMs: 100 }, 'timeoutMs', 'only provider kinds');
  });

  test('the credential is wrapped at rest, never returned, never in the audit log; an update without one keeps it', async () => {
    const created = await tg.must(admin('CreateGuardrail'), {
      ...at(),
      name: 'sealed',
      stage: 'input',
      kind: 'lakera',
      action: 'flag',
      provider: { url: v.url, authValue: SECRET, options: { projectId: 'proj-1' } },
    });
    expect(JSON.stringify(created)).not.toContain(SECRET);
    expect(created.guardrail).toMatchObject({
      provider: { url: v.url, hasAuthValue: true, options: { projectId: 'proj-1' } },
      kind: 'lakera',
    });
    await tg.must(admin('UpdateGuardrail'), { ...at(), name: 'sealed', timeoutMs: 500 });
    const got = await tg.must(admin('GetGuardrail'), { ...at(), name: 'sealed' });
    expect(got.guardrail).toMatchObject({ timeoutMs: 500, provider: { hasAuthValue: true } });
    expect(JSON.stringify(await tg.must(admin('ListGuardrails'), at()))).not.toContain(SECRET);
    const [row] = await tg.gw.store.db.select().from(guardrails).where(eq(guardrails.name, 'sealed'));
    expect(row?.authValueWrapped).toBeTruthy();
    expect(row?.authValueWrapped).not.toContain(SECRET);
    const audit = await tg.gw.store.db.select().from(auditLogs);
    expect(JSON.stringify(audit)).not.toContain(SECRET);
    // The kept credential still reaches the vendor.
    v.calls.length = 0;
    await ask('hello');
    expect(v.calls.find((c) => c.path === '/v2/guard')?.headers.authorization).toBe(`Bearer ${SECRET}`);
    const guard = v.calls.find((c) => c.path === '/v2/guard')?.body;
    expect(JSON.stringify(guard)).toContain('"project_id":"proj-1"');
    await tg.must(admin('DeleteGuardrail'), { ...at(), name: 'sealed' });
  });
});
