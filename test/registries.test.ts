import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRegistries } from '../scripts/gen-registries.ts';
import { DECLARATIONS, OPS } from '../src/api/index.ts';
import type { TerraformDecl } from '../src/api/resource.ts';
import { ENTITIES_KEEPING_API_KEYS, RESOURCES } from '../src/api/resources.ts';
import { RESOURCES as PROVIDER_RESOURCES } from '../iac/provider/registry.ts';
import { hooksOf } from '../iac/provider/hooks.ts';

/**
 * Resources are declared once (issue 23 item 3): the registries that list every operation, resource,
 * service and table are generated (`bun run gen:registries`), and the Terraform provider's
 * resources are exactly the declared mappings.
 */

const ROOT = join(import.meta.dir, '..');

test('the generated registries are what `bun run gen:registries` renders now', async () => {
  for (const [path, text] of Object.entries(await renderRegistries()))
    expect([path, readFileSync(join(ROOT, path), 'utf8')]).toEqual([path, text]);
});

test('every change kind is declared once, and RESOURCES is the declarations’ changes', () => {
  const kinds = Object.values(RESOURCES).map((r) => r.kind);
  expect(new Set(kinds).size).toBe(kinds.length);
  for (const [name, decl] of Object.entries(DECLARATIONS))
    if ('change' in decl) expect([name, RESOURCES[name as keyof typeof RESOURCES]]).toEqual([name, decl.change]);
  expect(Object.keys(RESOURCES).sort()).toEqual(
    Object.entries(DECLARATIONS)
      .filter(([, d]) => 'change' in d)
      .map(([n]) => n)
      .sort(),
  );
  expect(ENTITIES_KEEPING_API_KEYS.has('api_key')).toBe(false);
  expect(ENTITIES_KEEPING_API_KEYS.has('mcp_profile')).toBe(true);
});

test('the provider serves exactly the declared Terraform mappings, through declared operations', () => {
  const declared: TerraformDecl[] = Object.values(DECLARATIONS).flatMap((d): TerraformDecl[] => ('terraform' in d ? [d.terraform] : []));
  expect(PROVIDER_RESOURCES.map((r) => r.type)).toEqual(declared.map((d) => d.type).sort());
  const specs = new Set<object>(Object.values(OPS));
  for (const d of declared) {
    for (const op of [d.create, d.get, d.update, d.delete, d.list?.op])
      if (op) expect([d.type, op.name, specs.has(op)]).toEqual([d.type, op.name, true]);
    // A mapping with neither a natural key nor an id field has its CRUD in the provider's hooks.
    if (!('key' in d) && !('idField' in d))
      expect([d.type, typeof hooksOf(d.type)?.read, typeof hooksOf(d.type)?.delete]).toEqual([d.type, 'function', 'function']);
  }
});

test('a resource whose secret has a write-only form gets the Terraform >= 1.11 trio and its checks from the declaration alone', () => {
  const conn = PROVIDER_RESOURCES.find((r) => r.type === 'gateway_provider_connection');
  expect(
    conn?.attrs.filter((a) => a.tf.startsWith('api_key')).map((a) => [a.tf, Boolean(a.writeOnly), Boolean(a.local), Boolean(a.sensitive)]),
  ).toEqual([
    ['api_key', false, false, true],
    ['api_key_wo', true, false, true],
    ['api_key_wo_version', false, true, false],
  ]);
  expect(conn?.check?.({ api_key: 'a', api_key_wo: 'b' })).toEqual([['api_key_wo', 'set either api_key or api_key_wo, not both']]);
  const body: Record<string, string> = {};
  conn?.amend?.(body, { api_key_wo_version: 1 }, { api_key_wo_version: 2 }, { api_key_wo: 'sk-new' });
  expect(body).toEqual({ apiKey: 'sk-new' });
  const mcp = PROVIDER_RESOURCES.find((r) => r.type === 'gateway_mcp_server');
  // The write-only check first, then the resource's own hook (the API's auth rule).
  expect(mcp?.check?.({ auth_value: 'a', auth_value_wo: 'b' })).toEqual([
    ['auth_value_wo', 'set either auth_value or auth_value_wo, not both'],
  ]);
  expect(mcp?.check?.({ auth_type: 'bearer', auth_header: null, auth_value: null, auth_value_wo: null })?.[0]?.[0]).toBe('auth_value');
});
