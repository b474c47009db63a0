import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { GHOST, OPS, PATTERN_SAMPLES, type Spec, sample } from './op-table.ts';
import { type Body, documentedOps, isInvalid, type Res, setPath, toSnake } from './support.ts';

/**
 * Table-driven validation: for every operation and every bound of the seed, one valid value at each
 * edge and one invalid value past it; invalid values are `invalid_argument` naming the field.
 * Bases reference nothing that exists, so valid values stop at a lookup (not_found) after
 * validation and store nothing.
 */

let tg: TestGateway;
let documented: Awaited<ReturnType<typeof documentedOps>>;

beforeAll(async () => {
  tg = await startTestGateway();
  documented = await documentedOps(tg);
}, 60_000);
let totalCases = 0;
afterAll(async () => {
  console.log(`validation: ${totalCases} bound cases over ${OPS.length} operations`);
  await tg.stop();
});

/** Parents created on demand when a nested field is set in a body that lacks them. */
const PARENTS: Record<string, Body> = {
  impersonationMetadata: { impersonatorKey: 'imp-1' },
  enterpriseContext: { customerId: 'ghost-customer' },
  targets: [{ connection: 'c1', model: 'up-1' }] as unknown as Body,
  servers: [{ serverId: 's' }] as unknown as Body,
};

interface Case {
  value: unknown;
  valid: boolean;
  why: string;
}

const casesOf = (spec: Spec): Case[] => {
  const c: Case[] = [];
  const ok = (value: unknown, why: string) => c.push({ value, valid: true, why });
  const bad = (value: unknown, why: string) => c.push({ value, valid: false, why });
  switch (spec.kind) {
    case 'str': {
      const atMin = sample(spec.pattern, spec.min);
      const atMax = sample(spec.pattern, spec.max);
      if (atMin !== undefined) ok(atMin, `length ${spec.min} (min)`);
      if (atMax !== undefined) ok(atMax, `length ${spec.max} (max)`);
      if (spec.min > 0) bad('a'.repeat(spec.min - 1), `length ${spec.min - 1} (below min)`);
      bad(sample(spec.pattern, spec.max + 1) ?? 'a'.repeat(spec.max + 1), `length ${spec.max + 1} (above max)`);
      bad(12345, 'a number');
      if (spec.nullable) ok(null, 'null (nullable)');
      else bad(null, 'null');
      if (spec.pattern) {
        for (const v of PATTERN_SAMPLES[spec.pattern].valid) ok(v, `matches ${spec.pattern}`);
        for (const v of PATTERN_SAMPLES[spec.pattern].invalid) bad(v, `does not match ${spec.pattern}`);
      }
      break;
    }
    case 'int32':
      ok(spec.min, 'min');
      ok(spec.max, 'max');
      bad(spec.min - 1, 'below min');
      bad(spec.max + 1, 'above max');
      bad(String(spec.min), 'int32 as a string');
      bad(spec.min + 0.5, 'not an integer');
      bad(true, 'a boolean');
      if (spec.nullable) ok(null, 'null (nullable)');
      break;
    case 'int64':
      ok(spec.min, 'min');
      ok(spec.max, 'max');
      ok(String(spec.min), 'min as a string');
      ok(String(spec.max), 'max as a string');
      bad(spec.min - 1, 'below min');
      bad(spec.max + 1, 'above max');
      bad(String(spec.min - 1), 'below min, as a string');
      bad(String(spec.max + 1), 'above max, as a string');
      bad('99999999999999999999', 'huge string');
      bad('1.5', 'decimal string');
      bad('ten', 'not digits');
      bad(true, 'a boolean');
      if (spec.nullable) ok(null, 'null (nullable)');
      break;
    case 'number':
      ok(spec.min, 'min');
      ok(spec.max, 'max');
      ok(spec.min + 0.25, 'fractional');
      bad(spec.min - 0.001, 'below min');
      bad(spec.max + 1, 'above max');
      bad('1', 'a string');
      break;
    case 'enum':
      for (const v of spec.values) ok(v, `enum value ${v}`);
      bad('bogus', 'not in the enum');
      bad('', 'empty');
      bad(5, 'a number');
      break;
    case 'enumArray':
      ok([], 'empty');
      ok([...spec.values], `all ${spec.values.length} values`);
      bad([...spec.values, spec.values[0]], `${spec.maxItems + 1} items`);
      bad(['bogus'], 'unknown item');
      bad(spec.values[0], 'not an array');
      break;
    case 'bool':
      ok(true, 'true');
      ok(false, 'false');
      bad('true', 'a string');
      bad(1, 'a number');
      if (spec.nullable) ok(null, 'null (nullable)');
      break;
    case 'labels': {
      const n = (k: number) => Object.fromEntries(Array.from({ length: k }, (_, i) => [`k${i}`, 'v']));
      ok({}, 'empty');
      ok(n(50), '50 entries');
      ok({ k: 'v'.repeat(255) }, 'value of 255');
      ok({ ['k'.repeat(255)]: 'v' }, 'key of 255');
      bad(n(51), '51 entries');
      bad({ k: 'v'.repeat(256) }, 'value of 256');
      bad({ ['k'.repeat(256)]: 'v' }, 'key of 256');
      bad({ '': 'v' }, 'empty key');
      bad({ k: 5 }, 'non-string value');
      bad(['a'], 'an array');
      break;
    }
    case 'strArray': {
      const item = sample(spec.pattern, spec.itemMax) as string;
      ok([], 'empty');
      ok(
        Array.from({ length: spec.maxItems }, () => item),
        `${spec.maxItems} items of ${spec.itemMax}`,
      );
      bad(
        Array.from({ length: spec.maxItems + 1 }, () => 'a'),
        `${spec.maxItems + 1} items`,
      );
      bad(['a'.repeat(spec.itemMax + 1)], `item of ${spec.itemMax + 1}`);
      if (spec.pattern) for (const v of PATTERN_SAMPLES[spec.pattern].invalid) bad([v], `item does not match ${spec.pattern}`);
      bad('a', 'not an array');
      break;
    }
    case 'datetime':
      ok('2026-01-02T03:04:05Z', 'RFC 3339 UTC');
      ok('2026-01-02T03:04:05.123+02:00', 'RFC 3339 with offset');
      bad('yesterday', 'not a time');
      bad(5, 'a number');
      break;
    case 'cases':
      for (const v of spec.valid) ok(v, `listed valid ${JSON.stringify(v).slice(0, 40)}`);
      for (const v of spec.invalid) bad(v, `listed invalid ${JSON.stringify(v).slice(0, 40)}`);
      break;
    case 'array':
      ok(Array.from({ length: spec.min }, spec.item), `${spec.min} items (min)`);
      ok(Array.from({ length: spec.max }, spec.item), `${spec.max} items (max)`);
      if (spec.min > 0) bad(Array.from({ length: spec.min - 1 }, spec.item), `${spec.min - 1} items`);
      bad(Array.from({ length: spec.max + 1 }, spec.item), `${spec.max + 1} items`);
      bad('x', 'not an array');
      break;
  }
  return c;
};

/** Bounded property paths of a documented request schema (see op-table.ts for the path syntax). */
const boundedPaths = (schema: Body, prefix = '', out = new Set<string>()): Set<string> => {
  const boundKeys = [
    'minLength',
    'maxLength',
    'pattern',
    'minimum',
    'maximum',
    'maxProperties',
    'maxItems',
    'minItems',
    'format',
    'const',
    'enum',
  ];
  const visit = (v: Body, path: string) => {
    if (Array.isArray(v.anyOf)) {
      out.add(path);
      for (const b of v.anyOf as Body[]) if (b.properties) boundedPaths(b, path, out);
      return;
    }
    if (v.properties) return void boundedPaths(v, path, out);
    if (v.type === 'array') {
      out.add(path);
      const items = v.items as Body | undefined;
      if (items?.properties) boundedPaths(items, `${path}.0`, out);
      return;
    }
    const types = [v.type].flat();
    if (v.patternProperties || boundKeys.some((k) => k in v) || types.includes('integer') || types.includes('boolean')) out.add(path);
  };
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, Body>)) visit(v, prefix ? `${prefix}.${k}` : k);
  return out;
};

describe('the table covers the API', () => {
  test('every documented operation has a row, and every row is a documented operation', () => {
    const paths = [...documented.keys()];
    expect(OPS.map((o) => o.path).sort()).toEqual(paths.sort());
  });

  test('every bounded field of every operation is in the table (and the table names no unknown field)', () => {
    const missing: string[] = [];
    const stale: string[] = [];
    for (const c of OPS) {
      const schema = documented.get(c.path)?.body ?? {};
      const bounded = boundedPaths(schema);
      for (const p of bounded) if (!(p in c.fields) && !p.endsWith('.context') && !p.startsWith('options')) missing.push(`${c.path} ${p}`);
      for (const p of Object.keys(c.fields)) if (!bounded.has(p)) stale.push(`${c.path} ${p}`);
    }
    expect(missing).toEqual([]);
    expect(stale).toEqual([]);
  });
});

describe('bounds, one operation at a time', () => {
  for (const c of OPS) {
    const name = c.path.split('/').pop() as string;
    test(`${name}: valid at every edge, invalid past it`, async () => {
      const base = c.base(GHOST);
      const failures: string[] = [];
      let n = 0;
      for (const [field, spec] of Object.entries(c.fields)) {
        for (const k of casesOf(spec)) {
          n++;
          const r: Res = await tg.call(c.path, setPath(base, field, k.value, PARENTS));
          const invalid = isInvalid(r);
          if (k.valid && invalid) failures.push(`${field} = ${k.why}: rejected: ${String(r.body.message)}`);
          if (!k.valid && !isInvalid(r, field))
            failures.push(
              `${field} = ${k.why}: expected invalid_argument naming '${field}', got ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`,
            );
          if (r.status >= 500) failures.push(`${field} = ${k.why}: ${r.status}`);
        }
      }
      totalCases += n;
      expect(failures).toEqual([]);
      // An operation without fields (RotateUserTokenSigningKey) has no bound to check.
      if (Object.keys(c.fields).length > 0) expect(n).toBeGreaterThan(0);
    });
  }
});

describe('wire conventions, every operation', () => {
  test('snake_case property names are accepted (same outcome as camelCase)', async () => {
    const failures: string[] = [];
    for (const c of OPS) {
      const camel = await tg.call(c.path, c.base(GHOST));
      const snake = await tg.call(c.path, toSnake(c.base(GHOST)));
      if (isInvalid(camel) || isInvalid(snake) || camel.status !== snake.status)
        failures.push(`${c.path}: camel ${camel.status}, snake ${snake.status} ${JSON.stringify(snake.body)}`);
    }
    expect(failures).toEqual([]);
  });

  test('unknown properties are rejected, naming the property (top level and nested)', async () => {
    const failures: string[] = [];
    for (const c of OPS) {
      const r = await tg.call(c.path, { ...c.base(GHOST), surprise: 1 });
      if (!isInvalid(r, 'surprise') || !String(r.body.message).includes('unknown property'))
        failures.push(`${c.path}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const nested = await tg.call('/apikey.v1.ApiKeyService/CreateApiKey', { enterpriseContext: { customerId: 'x', extra: true } });
    if (!isInvalid(nested, 'enterpriseContext.extra')) failures.push(`nested: ${JSON.stringify(nested.body)}`);
    const inArray = await tg.call('/admin.v1.AdminService/CreateRoute', {
      customerId: 'x',
      model: 'm',
      targets: [{ connection: 'c', model: 'u', bogus: 1 }],
    });
    if (!isInvalid(inArray, 'targets.0.bogus')) failures.push(`array item: ${JSON.stringify(inArray.body)}`);
    expect(failures).toEqual([]);
  });

  test('prototype keys cannot smuggle unvalidated values (__proto__, constructor)', async () => {
    const smuggle = await tg.call(
      '/admin.v1.AdminService/CreateCustomer',
      `{"customerId":"proto","__proto__":{"name":"${'x'.repeat(300)}"}}`,
    );
    expect(isInvalid(smuggle, '__proto__')).toBe(true);
    expect(
      isInvalid(await tg.call('/admin.v1.AdminService/CreateCustomer', '{"customerId":"proto","constructor":{}}'), 'constructor'),
    ).toBe(true);
    const nested = await tg.call(
      '/apikey.v1.ApiKeyService/CreateApiKey',
      '{"enterpriseContext":{"customerId":"x","__proto__":{"projectId":"evil"}}}',
    );
    expect(isInvalid(nested, 'enterpriseContext.__proto__')).toBe(true);
  });

  test('a field given both as camelCase and snake_case is rejected', async () => {
    const r = await tg.call('/admin.v1.AdminService/GetCustomer', { customerId: 'a', customer_id: 'b' });
    expect(isInvalid(r, 'customerId')).toBe(true);
  });

  test('missing required fields are named; non-object bodies and bad JSON are invalid_argument', async () => {
    const missing = await tg.call('/admin.v1.AdminService/CreateProject', { customerId: 'acme' });
    expect(isInvalid(missing, 'projectId')).toBe(true);
    for (const body of ['[1,2]', '"text"', '42', '{"a":', 'not json', '', 'null']) {
      const r = await tg.call('/admin.v1.AdminService/ListCustomers', body);
      expect(isInvalid(r)).toBe(true);
    }
    expect((await tg.call('/admin.v1.AdminService/ListCustomers', '{}')).status).toBe(200);
  });

  test('pins Elysia behaviour: int32 rejects digit strings, int64 takes both spellings and answers strings', async () => {
    const asString = await tg.call('/admin.v1.AdminService/ListCustomers', { pageSize: '5' });
    expect(isInvalid(asString, 'pageSize')).toBe(true);
    expect(String(asString.body.message)).toContain('integer');
    await tg.must('/admin.v1.AdminService/CreateCustomer', { customerId: 'int64-check' });
    for (const expiresInDays of [7, '7']) {
      const r = await tg.must('/admin.v1.AdminService/CreateUserToken', {
        customerId: 'int64-check',
        workspaceId: 'w',
        userId: 'u',
        organizationUnit: 'o',
        role: 'r',
        expiresInDays,
      });
      expect(r.expiresIn).toBe(String(7 * 86_400));
    }
  });

  test('unknown operations and wrong methods are Connect errors', async () => {
    const r = await tg.call('/admin.v1.AdminService/NoSuchOperation', {});
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
  });

  test('the field is named for nested label values and NUL characters', async () => {
    const label = await tg.call('/admin.v1.AdminService/CreateCustomer', { customerId: 'x', labels: { team: 'v'.repeat(256) } });
    expect(isInvalid(label, 'labels.team')).toBe(true);
    const nul = await tg.call('/admin.v1.AdminService/CreateCustomer', { customerId: 'x', name: 'a\u0000b' });
    expect(isInvalid(nul, 'name')).toBe(true);
  });
});
