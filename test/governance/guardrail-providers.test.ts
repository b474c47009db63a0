import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { requestRecords } from '../../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { AWS_ACCESS_KEY, AWS_SECRET, type MockVendors, startMockVendors, VENDOR_KEY } from '../support/mock-guardrail-vendors.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { meteredWorld, type World } from './support.ts';

/**
 * Provider guardrails (contract §15) on every door: the project has one guardrail of each vendor
 * kind (stage both), each vendor simulated in its own wire format (support/mock-guardrail-vendors.ts)
 * and flagging its own trigger word, so each refusal names the vendor's guardrail that decided.
 */
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let v: MockVendors;
let w: World;
const at = () => ({ customerId: w.customerId, projectId: w.projectId });

/** Each blocking kind: its guardrail's name and the word its vendor flags. */
export const BLOCKERS = [
  { name: 'g-armor', word: 'armor-match' },
  { name: 'g-azure', word: 'hate-azure' },
  { name: 'g-bedrock', word: 'deny-bedrock' },
  { name: 'g-lakera', word: 'inject-lakera' },
  { name: 'g-openai', word: 'kill-openai' },
  { name: 'g-webhook', word: 'block-webhook' },
] as const;

/** One guardrail of each vendor kind on the project (`url`: the mock vendors). */
export const createVendorGuardrails = async (t: TestGateway, where: { customerId: string; projectId: string }, url: string) => {
  await t.must(admin('CreateProviderConnection'), { ...where, name: 'mods', provider: 'openai', baseUrl: `${url}/v1`, apiKey: VENDOR_KEY });
  await t.must(admin('CreateProviderConnection'), {
    ...where,
    name: 'aws',
    provider: 'bedrock',
    baseUrl: url,
    apiKey: AWS_SECRET,
    options: { region: 'us-east-1', accessKeyId: AWS_ACCESS_KEY },
  });
  const g = (name: string, kind: string, provider: Record<string, unknown>) =>
    t.must(admin('CreateGuardrail'), { ...where, name, stage: 'both', kind, action: 'block', provider });
  await g('g-openai', 'openai_moderation', { connectionId: 'mods' });
  await g('g-azure', 'azure_content_safety', { url, authValue: VENDOR_KEY, options: { severityThreshold: 4 } });
  await g('g-bedrock', 'bedrock_guardrail', { connectionId: 'aws', options: { guardrailIdentifier: 'gr-test', guardrailVersion: '1' } });
  await g('g-lakera', 'lakera', { url, authValue: VENDOR_KEY });
  await g('g-presidio', 'presidio', { url, options: { scoreThreshold: 0.5 } });
  await g('g-armor', 'model_armor', { url, authValue: VENDOR_KEY, options: { project: 'p1', location: 'us-central1', template: 't1' } });
  await g('g-webhook', 'webhook', { url: `${url}/webhook`, authValue: VENDOR_KEY });
};

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  v = startMockVendors();
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url);
  await createVendorGuardrails(tg, at(), v.url);
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
  v?.stop();
});

const post = (path: string, body: Record<string, unknown>) =>
  fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const DOORS = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    up: () => oa,
    body: (t: string, s: boolean) => ({ model: 'metered', stream: s, messages: [{ role: 'user', content: t }] }),
  },
  { name: 'responses', path: '/v1/responses', up: () => oa, body: (t: string, s: boolean) => ({ model: 'metered', stream: s, input: t }) },
  {
    name: 'messages',
    path: '/v1/messages',
    up: () => an,
    body: (t: string, s: boolean) => ({ model: 'claude-mini', stream: s, max_tokens: 50, messages: [{ role: 'user', content: t }] }),
  },
];

describe.each(DOORS)('$name', (door) => {
  test.each(BLOCKERS)('input flagged by $name: 400 guardrail_blocked naming it, the upstream never called', async (b) => {
    const before = door.up().requests.length;
    const r = await post(door.path, door.body(`please ${b.word} now`, false));
    expect(r.status).toBe(400);
    const text = await r.text();
    expect(text).toContain('guardrail_blocked');
    expect(text).toContain(`'${b.name}'`);
    expect(door.up().requests.length).toBe(before);
  });

  test('input redactions: Presidio spans, Bedrock masked output and webhook spans all reach the upstream rewritten', async () => {
    const r = await post(door.path, door.body('mail me at ann@corp.io, ssn 123-45-6789, hide-me please', false));
    expect(r.status).toBe(200);
    const sent = JSON.stringify(door.up().requests.at(-1)?.body);
    expect(sent).toContain('[REDACTED:EMAIL_ADDRESS]');
    expect(sent).toContain('{US_SSN}');
    expect(sent).toContain('[REDACTED:g-webhook]');
    expect(sent).not.toContain('ann@corp.io');
    expect(sent).not.toContain('123-45-6789');
  });

  test('a clean request passes every vendor, each decision on the record with its latency', async () => {
    const r = await post(door.path, door.body('hello there', false));
    expect(r.status).toBe(200);
    const id = r.headers.get('x-request-id') ?? '';
    await tg.gw.records.flush();
    const [rec] = await tg.gw.store.db.select().from(requestRecords).where(eq(requestRecords.requestId, id));
    const decisions = JSON.parse(rec?.guardrails ?? '[]') as {
      name: string;
      stage: string;
      action: string;
      provider: string;
      latencyMs: number;
    }[];
    const input = decisions.filter((d) => d.stage === 'input');
    expect(input.map((d) => d.name).sort()).toEqual(['g-armor', 'g-azure', 'g-bedrock', 'g-lakera', 'g-openai', 'g-presidio', 'g-webhook']);
    expect(input.every((d) => d.action === 'allow' && typeof d.latencyMs === 'number')).toBe(true);
    expect(decisions.find((d) => d.name === 'g-armor')?.provider).toBe('model_armor');
    expect(JSON.stringify(rec)).not.toContain(VENDOR_KEY);
  });

  for (const stream of [false, true]) {
    test(`${stream ? 'stream' : 'whole answer'}: output PII split across chunks is redacted by Presidio before release`, async () => {
      door.up().script(() => ({
        text: 'write to bob@example.com today',
        textChunks: ['write to bob@exa', 'mple.com today'],
        usage: { input: 5, output: 5 },
        chunkDelayMs: 10,
      }));
      const r = await post(door.path, door.body('tell me', stream));
      door.up().script(undefined);
      expect(r.status).toBe(200);
      const out = await r.text();
      expect(out).not.toContain('bob@');
      expect(out).toContain('[REDACTED:EMAIL_ADDRESS]');
    });

    test(`${stream ? 'stream' : 'whole answer'}: output flagged by Model Armor is withheld or ends the stream with the format's error`, async () => {
      door.up().script(() => ({ text: 'fine start then armor-match end', usage: { input: 5, output: 5 } }));
      const r = await post(door.path, door.body('tell me', stream));
      door.up().script(undefined);
      const out = await r.text();
      expect(out).toContain('guardrail_blocked');
      expect(out).toContain('g-armor');
      expect(out).not.toContain('armor-match');
      if (!stream) expect(r.status).toBe(400);
    });
  }
});

test('Model Armor gets sanitizeModelResponse on output, Bedrock a verified SigV4 signature and source OUTPUT', async () => {
  v.calls.length = 0;
  const r = await post('/v1/chat/completions', { model: 'metered', messages: [{ role: 'user', content: 'hi' }] });
  expect(r.status).toBe(200);
  const paths = v.calls.map((c) => c.path);
  expect(paths).toContain('/v1/projects/p1/locations/us-central1/templates/t1:sanitizeUserPrompt');
  expect(paths).toContain('/v1/projects/p1/locations/us-central1/templates/t1:sanitizeModelResponse');
  const bedrock = v.calls.filter((c) => c.path === '/guardrail/gr-test/version/1/apply');
  expect(bedrock.map((c) => (c.body as { source: string }).source).sort()).toEqual(['INPUT', 'OUTPUT']);
  expect(bedrock[0]?.headers.authorization?.startsWith(`AWS4-HMAC-SHA256 Credential=${AWS_ACCESS_KEY}/`)).toBe(true);
});
