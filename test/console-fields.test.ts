import { expect, test } from 'bun:test';
import { OPS } from '../src/api/index.ts';
import { bodyOf, fieldOfError, fieldsOf, htmlPattern, labelOf, messageOfError } from '../src/console/app/fields.ts';
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
  expect(key.enterpriseContext?.fields?.find((f) => f.name === 'expiresInDays')).toMatchObject({ kind: 'number', minimum: 1, maximum: 3650 });
  const budget = Object.fromEntries(fieldsOf(OPS.UpsertBudget.input).map((f) => [f.name, f]));
  expect(budget.period).toMatchObject({ kind: 'choice', choices: ['day', 'week', 'month', 'total'] });
});

test('the body leaves empty optional fields out and types what it sends', () => {
  const fields = fieldsOf(OPS.CreateRoute.input);
  const body = bodyOf(
    fields,
    { customerId: 'acme', projectId: 'web', model: 'm', 'targets.0.connection': 'c', 'targets.0.model': 'u', 'targets.1.connection': 'c', 'targets.1.model': 'v', 'targets.1.priority': '1', timeoutMs: '' },
    { targets: 2 },
  );
  expect(body).toEqual({ customerId: 'acme', projectId: 'web', model: 'm', targets: [{ connection: 'c', model: 'u' }, { connection: 'c', model: 'v', priority: 1 }] });
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
  expect(outside).toEqual(['src/core/byok.ts', 'src/core/errors.ts', 'src/governance/periods.ts', 'src/governance/pii.ts', 'src/governance/setting-values.ts']);
  expect([...loaded].filter((f) => !f.startsWith('src/') && !f.includes('node_modules/preact/') && !f.includes('node_modules/@sinclair/typebox/'))).toEqual([]);
});
