import { expect, test } from 'bun:test';
import { OPS } from '../src/api/index.ts';
import { auditPath, merkleRoot } from '../src/audit/merkle.ts';
import { jcs } from '../src/core/jcs.ts';
import { type Change, noteRevisions, type Plane, stageOn } from '../src/console/app/changes.ts';
import { bodyOf, fieldOfError, fieldsOf, htmlPattern, labelOf, messageOfError, valuesOf } from '../src/console/app/fields.ts';
import { leafHashOf, rootFromPath } from '../src/audit/verifier.ts';
import { ROOT } from './support/import-graph.ts';

/** The console's forms come from the op specs: labels, HTML constraints and request bodies. */

test('labels are the API field names in words', () => {
  expect(labelOf('customerId')).toBe('Customer ID');
  expect(labelOf('baseUrl')).toBe('Base URL');
  expect(labelOf('limitUsd')).toBe('Limit USD');
  expect(labelOf('apiKey')).toBe('API key');
  expect(labelOf('inputPricePerMillion')).toBe('Input price per million');
});

test("a JSON Schema pattern becomes an HTML pattern that matches the same values; one the browser's v flag cannot compile is left to the API", () => {
  const starts = new RegExp(`^(?:${htmlPattern('^https?://')})$`, 'v');
  expect(starts.test('http://127.0.0.1:1/v1')).toBe(true);
  expect(starts.test('ftp://x')).toBe(false);
  const slug = new RegExp(`^(?:${htmlPattern('^[a-z0-9]([a-z0-9-]*[a-z0-9])?$')})$`, 'v');
  expect(slug.test('acme-1')).toBe(true);
  expect(slug.test('Acme')).toBe(false);
  const id = new RegExp(`^(?:${htmlPattern('^[a-zA-Z0-9-_.]+$')})$`, 'v');
  expect(id.test('mock-openai_1.x')).toBe(true);
  expect(id.test('no spaces')).toBe(false);
  // Not a pattern the browser can compile: left to the API.
  expect(htmlPattern('[&&]')).toBeUndefined();
});

test("fields carry the API's bounds; the secret is a password field; nested objects and lists of objects are groups and rows", () => {
  const conn = fieldsOf(OPS.CreateProviderConnection.input);
  const byName = Object.fromEntries(conn.map((f) => [f.name, f]));
  expect(byName.name).toMatchObject({ kind: 'text', required: true, minLength: 1, maxLength: 253 });
  expect(byName.apiKey).toMatchObject({ kind: 'secret', required: false, maxLength: 16384 });
  expect(byName.options?.kind).toBe('json');
  const route = Object.fromEntries(fieldsOf(OPS.CreateRoute.input).map((f) => [f.name, f]));
  expect(route.targets).toMatchObject({ kind: 'rows', minItems: 1, maxItems: 32 });
  expect(route.targets?.fields?.find((f) => f.name === 'weight')).toMatchObject({ kind: 'number', minimum: 0, maximum: 10_000 });
  expect(route.timeoutMs).toMatchObject({ kind: 'number', minimum: 1, maximum: 3_600_000 });
  const key = Object.fromEntries(fieldsOf(OPS.CreateApiKey.input).map((f) => [f.name, f]));
  expect(key.enterpriseContext?.kind).toBe('group');
  expect(key.enterpriseContext?.fields?.find((f) => f.name === 'expiresInDays')).toMatchObject({
    kind: 'number',
    minimum: 1,
    maximum: 3650,
  });
  const budget = Object.fromEntries(fieldsOf(OPS.UpsertBudget.input).map((f) => [f.name, f]));
  expect(budget.period).toMatchObject({ kind: 'choice', choices: ['day', 'week', 'month', 'total'] });
});

test('the body leaves empty optional fields out and types what it sends', () => {
  const fields = fieldsOf(OPS.CreateRoute.input);
  const body = bodyOf(
    fields,
    {
      customerId: 'acme',
      projectId: 'web',
      model: 'm',
      'targets.0.connection': 'c',
      'targets.0.model': 'u',
      'targets.1.connection': 'c',
      'targets.1.model': 'v',
      'targets.1.priority': '1',
      timeoutMs: '',
    },
    { targets: 2 },
  );
  expect(body).toEqual({
    customerId: 'acme',
    projectId: 'web',
    model: 'm',
    targets: [
      { connection: 'c', model: 'u' },
      { connection: 'c', model: 'v', priority: 1 },
    ],
  });
});

test("the field an API error names, and the message without the client's prefix", () => {
  const m = "UpsertBudget: invalid_argument: invalid field 'limitUsd': a decimal string";
  expect(fieldOfError(m)).toBe('limitUsd');
  expect(messageOfError(m)).toBe("invalid field 'limitUsd': a decimal string");
  expect(fieldOfError('CreateCustomer: already_exists: customer exists')).toBeUndefined();
});

test('the console bundles for the browser from src/console/app, src/api and a few pure helpers: no server, store or plane code', async () => {
  const loaded = new Set<string>();
  const result = await Bun.build({
    entrypoints: [`${ROOT}/src/console/app/main.tsx`],
    target: 'browser',
    plugins: [
      {
        name: 'record',
        setup(b) {
          b.onLoad({ filter: /\.tsx?$/ }, async (a) => {
            loaded.add(a.path.slice(ROOT.length + 1));
            return { contents: await Bun.file(a.path).text(), loader: a.path.endsWith('x') ? 'tsx' : 'ts' };
          });
        },
      },
    ],
  });
  expect(result.success).toBe(true);
  const outside = [...loaded].filter((f) => f.startsWith('src/') && !f.startsWith('src/console/app/') && !f.startsWith('src/api/')).sort();
  expect(outside).toEqual([
    'src/audit/verifier.ts',
    'src/core/byok.ts',
    'src/core/bytes.ts',
    'src/core/errors.ts',
    'src/core/jcs.ts',
    'src/core/json.ts',
    'src/governance/guardrail-providers.ts',
    'src/governance/guardrail-scan.ts',
    'src/governance/normalize.ts',
    'src/governance/pattern.ts',
    'src/governance/periods.ts',
    'src/governance/pii.ts',
    'src/governance/setting-values.ts',
  ]);
  expect(
    [...loaded].filter(
      (f) =>
        !f.startsWith('src/') &&
        !f.includes('node_modules/preact/') &&
        !f.includes('node_modules/@sinclair/typebox/') &&
        !f.includes('node_modules/canonicalize/') &&
        !f.includes('node_modules/re2js/'),
    ),
  ).toEqual([]);
});

test('an edit form starts with the resource as the API returned it: rows, lists and JSON; never a secret', () => {
  const route = fieldsOf(OPS.UpdateRoute.input);
  const { values, rows } = valuesOf(route, {
    id: 'r1',
    model: 'm',
    targets: [
      { connection: 'c', model: 'u', priority: 0, weight: 3 },
      { connection: 'c', model: 'v', priority: 1, weight: 1 },
    ],
    enabled: true,
  });
  expect(rows).toEqual({ targets: 2 });
  expect(values).toMatchObject({
    id: 'r1',
    model: 'm',
    'targets.0.weight': '3',
    'targets.1.model': 'v',
    'targets.1.priority': '1',
    enabled: 'true',
  });
  // Back to the same body.
  expect(bodyOf(route, values, rows)).toEqual({
    id: 'r1',
    model: 'm',
    targets: [
      { connection: 'c', model: 'u', priority: 0, weight: 3 },
      { connection: 'c', model: 'v', priority: 1, weight: 1 },
    ],
    enabled: true,
  });
  const conn = valuesOf(fieldsOf(OPS.UpdateProviderConnection.input), { id: 'c1', apiKey: 'sk-never', options: { region: 'x' } });
  expect(conn.values.apiKey).toBeUndefined();
  expect(conn.values.options).toBe('{"region":"x"}');
  const profile = valuesOf(fieldsOf(OPS.UpdateMcpProfile.input), { servers: [{ serverId: 'docs', tools: ['a', 'b*'], prefix: 'd' }] });
  expect(profile.values['servers.0.tools']).toBe('a\nb*');
});

const plane = (dataplaneId: string, desired: number, applied: number, stage = applied >= desired ? 'serving' : 'pending'): Plane => ({
  dataplaneId,
  desiredRevision: String(desired),
  appliedRevision: String(applied),
  stage,
  faults: [],
});

test("a change's stage per plane: saved until read, then recorded / pending / serving where it moved the revision, not affected elsewhere", () => {
  const saved: Change = { id: 1, what: 'UpdateRoute m', at: 0, before: { local: '7', edge: '3' }, revision: {}, observed: false };
  expect(stageOn(saved, plane('local', 8, 7))).toBe('saved');
  const read = noteRevisions(saved, [plane('local', 8, 7), plane('edge', 3, 0, 'recorded'), plane('new', 1, 0, 'recorded')]);
  expect(read.revision).toEqual({ local: '8', new: '1' });
  expect(stageOn(read, plane('local', 8, 7))).toBe('pending');
  expect(stageOn(read, plane('edge', 3, 0, 'recorded'))).toBe('not affected');
  expect(stageOn(read, plane('new', 1, 0, 'recorded'))).toBe('recorded');
  // Serving once the plane applied this change's revision, even when a newer change is pending.
  expect(stageOn(read, plane('local', 9, 8))).toBe('serving');
  expect(stageOn(read, plane('local', 9, 7))).toBe('pending');
  // Read once: a later read does not move its revisions.
  expect(noteRevisions(read, [plane('local', 12, 12), plane('edge', 5, 0)]).revision).toEqual({ local: '8', new: '1' });
});

test("the browser's proof check (WebCrypto) agrees with the server's trees, and refuses a wrong leaf, index or path", async () => {
  const entries = Array.from({ length: 11 }, (_, i) => ({
    id: `e${i}`,
    timestamp: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
    n: i,
    nested: { b: [1, 'x'], a: null },
  }));
  // The server's leaf hash (src/audit/entry.ts): SHA-256(0x00 ‖ JCS(entry)).
  const leaves = entries.map(
    (e) => new Uint8Array(new Bun.CryptoHasher('sha256').update(new Uint8Array([0, ...new TextEncoder().encode(jcs(e))])).digest()),
  );
  const root = merkleRoot(leaves);
  for (const i of [0, 5, 10]) {
    const browserLeaf = await leafHashOf(entries[i]);
    expect([...browserLeaf]).toEqual([...(leaves[i] as Uint8Array)]);
    const path = auditPath(leaves, i);
    expect([...((await rootFromPath(browserLeaf, i, leaves.length, path)) ?? [])]).toEqual([...root]);
    expect([...((await rootFromPath(browserLeaf, (i + 1) % 11, leaves.length, path)) ?? [])]).not.toEqual([...root]);
    expect(await rootFromPath(browserLeaf, i, leaves.length, path.slice(1))).toBeUndefined();
    expect([...((await rootFromPath(await leafHashOf({ ...entries[i], n: 99 }), i, leaves.length, path)) ?? [])]).not.toEqual([...root]);
  }
});
