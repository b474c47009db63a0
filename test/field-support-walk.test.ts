import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { ClientFormat, JsonObject, JsonValue } from '../src/canonical/types.ts';
import { FIELD_SUPPORT } from '../src/providers/field-support.ts';
import { COLUMN_TARGETS, COLUMNS, type Outcome, type Probe, type WalkTarget } from '../src/providers/field-support-types.ts';
import { DOC_PATH, withFieldSupport } from '../src/providers/field-support-doc.ts';
import { admin } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * docs/client-compatibility.md's "What each family honours, maps or refuses" table (issue 26, "Done means"),
 * walked: the table is generated from src/providers/field-support.ts (checked here for staleness),
 * and every probe of every row is sent over the raw wire to a model routed to each target it names;
 * the documented outcome is observed — a 400 naming the field with nothing sent upstream, or the
 * field as the upstream received it. OpenAI and Anthropic answer from their mocks; Gemini, Bedrock
 * and Cohere connections point at a recording mock (what they are sent is what is checked).
 */

let w: World;
let rec: MockUpstream;
let conversation = '';

const UPSTREAM: Record<WalkTarget, { provider: string; model: string; connection: string }> = {
  openai: { provider: 'openai', model: 'gpt-4o-mini', connection: 'walk-openai' },
  'openai-translated': { provider: 'openai', model: 'o4-mini', connection: 'walk-openai-translated' },
  anthropic: { provider: 'anthropic', model: 'claude-sonnet-4-5', connection: 'mock-anthropic' },
  gemini: { provider: 'gemini', model: 'gemini-2.5-flash', connection: 'walk-gemini' },
  bedrock: { provider: 'bedrock', model: 'amazon.nova-lite-v1:0', connection: 'walk-bedrock' },
  cohere: { provider: 'cohere', model: 'command-r', connection: 'walk-cohere' },
};
const mockOf = (t: WalkTarget): MockUpstream => (t === 'openai' || t === 'openai-translated' ? w.oa : t === 'anthropic' ? w.an : rec);
const PATHS: Record<ClientFormat, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  gemini: '/v1beta/models/{model}:generateContent',
  converse: '/model/{model}/converse',
  cohere: '/v2/chat',
};

const connection = (name: string, provider: string, baseUrl: string, options?: JsonObject) =>
  w.tg.must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name,
    provider,
    baseUrl,
    apiKey: 'sk-walk-upstream-secret',
    ...(options ? { options } : {}),
  });

beforeAll(async () => {
  w = await startWorld();
  rec = startMockUpstream('openai');
  await connection('walk-openai', 'openai', `${w.oa.url}/v1`);
  await connection('walk-openai-translated', 'openai', `${w.oa.url}/v1`, { maxTokensField: 'max_completion_tokens' });
  await connection('walk-gemini', 'gemini', rec.url);
  await connection('walk-bedrock', 'bedrock', rec.url, { region: 'us-east-1' });
  await connection('walk-cohere', 'cohere', rec.url);
  for (const [target, u] of Object.entries(UPSTREAM)) {
    const m = (await w.tg.must(admin('CreateModel'), {
      model: `walk-${target}`,
      provider: u.provider,
      capabilities: ['chat', 'tools', 'reasoning'],
      maxOutputTokens: 64000,
    })) as { model: { id: string } };
    await w.tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await w.tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      projectId: 'default',
      model: `walk-${target}`,
      targets: [{ connection: u.connection, model: u.model }],
    });
  }
  const conv = await fetch(`${w.tg.url}/v1/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  conversation = String(((await conv.json()) as JsonObject).id);
}, 60_000);
afterAll(async () => {
  rec.stop();
  await stopWorld(w);
});

/** The value at a dot-separated path (undefined when any step is missing). */
const at = (body: JsonValue | undefined, path: string): JsonValue | undefined => {
  let v: JsonValue | undefined = body;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = Array.isArray(v) ? v[Number(k)] : v[k];
  }
  return v;
};

/** Gemini and Converse name the model in the path (PATHS), the others in the body. */
const MODEL_IN_PATH = new Set<ClientFormat>(['gemini', 'converse']);
const bodyFor = (probe: Probe, target: WalkTarget): string =>
  JSON.stringify(MODEL_IN_PATH.has(probe.format) ? probe.body : { model: `walk-${target}`, ...probe.body }).replaceAll(
    '"$conversation"',
    JSON.stringify(conversation),
  );

const namedIn = (message: string | undefined, field: string): string | undefined => (message?.includes(field) ? field : message);

const observe = async (probe: Probe, target: WalkTarget, outcome: Outcome): Promise<void> => {
  const mock = mockOf(target);
  const before = mock.requests.length;
  const res = await fetch(`${w.tg.url}${PATHS[probe.format].replace('{model}', `walk-${target}`)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: bodyFor(probe, target),
  });
  const answer = (await res.json()) as { error?: { param?: string | null; message?: string }; message?: string };
  const what = `${probe.format} ${JSON.stringify(probe.body)} → ${target}`;
  if ('refused' in outcome) {
    // Google's, Bedrock's and Cohere's error bodies have no param member: their message names the field.
    const param =
      MODEL_IN_PATH.has(probe.format) || probe.format === 'cohere'
        ? namedIn(answer.error?.message ?? answer.message, outcome.refused)
        : answer.error?.param;
    expect({ what, status: res.status, param }).toEqual({ what, status: 400, param: outcome.refused });
    expect({ what, sent: mock.requests.length - before }).toEqual({ what, sent: 0 });
    return;
  }
  // Sent (a background request is sent after the answer).
  for (let i = 0; i < 100 && mock.requests.length === before; i++) await Bun.sleep(20);
  expect({ what, sent: mock.requests.length > before }).toEqual({ what, sent: true });
  const sent = mock.requests.at(-1)?.body as JsonObject;
  const value = at(sent, 'sent' in outcome ? outcome.sent : outcome.absent);
  if ('absent' in outcome) expect({ what, [outcome.absent]: value }).toEqual({ what, [outcome.absent]: undefined });
  else if (outcome.equals !== undefined) expect({ what, [outcome.sent]: value }).toEqual({ what, [outcome.sent]: outcome.equals });
  else expect({ what, present: value !== undefined }).toEqual({ what, present: true });
};

describe('docs/client-compatibility.md: what each family honours, maps or refuses', () => {
  test('the table in the docs is the one generated from the list (bun run docs:fields)', () => {
    const doc = readFileSync(DOC_PATH, 'utf8');
    expect(withFieldSupport(doc)).toBe(doc);
  });

  test('every row checks every column', () => {
    for (const row of FIELD_SUPPORT) {
      const checked = new Set(row.probes.flatMap((p) => Object.keys(p.expect)));
      for (const c of COLUMNS)
        expect({ row: row.field, column: c.id, checked: COLUMN_TARGETS[c.id].some((t) => checked.has(t)) }).toEqual({
          row: row.field,
          column: c.id,
          checked: true,
        });
    }
  });

  for (const row of FIELD_SUPPORT) {
    test(`walk: ${row.field}`, async () => {
      for (const probe of row.probes) {
        for (const [target, outcome] of Object.entries(probe.expect) as [WalkTarget, Outcome][]) await observe(probe, target, outcome);
      }
    });
  }
});
