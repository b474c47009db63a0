import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_SOURCES, RESOURCES } from '../../iac/provider/registry.ts';
import { protocolSchema, type SchemaAttribute, type SchemaBlock } from '../../iac/scripts/gen-l1.ts';
import { xxhash64Hex } from '../../src/control-plane/services/apikeys.ts';
import { ADMIN_TOKEN, apikeyOp, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * With the real terraform binary: the schema the built provider reports (`terraform providers
 * schema -json`, what `cdktf get` reads) is the one the L1 generator reads; and
 * gateway_api_key.user_key_address (the API's CreateApiKey.userKeyAddress) reaches the API.
 */

const config = (address: string) => `${PROVIDER_BLOCK}
resource "gateway_customer" "c" {
  customer_id = "tfkeys"
}
resource "gateway_api_key" "k" {
  customer_id      = gateway_customer.c.customer_id
  name             = "by-address"
  user_key_address = "${address}"
}
`;

interface TfAttribute {
  type: unknown;
  description?: string;
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  write_only?: boolean;
}
interface TfBlock {
  attributes?: Record<string, TfAttribute>;
  block_types?: Record<string, { min_items?: number; max_items?: number; block: TfBlock }>;
}

const attrs = (b: TfBlock | undefined): SchemaAttribute[] =>
  Object.entries(b?.attributes ?? {}).map(([name, a]) => ({
    name,
    type: a.type,
    description: a.description ?? '',
    required: a.required ?? false,
    optional: a.optional ?? false,
    computed: a.computed ?? false,
    sensitive: a.sensitive ?? false,
    write_only: a.write_only ?? false,
  }));
const byName = (list: SchemaAttribute[]) => [...list].sort((x, y) => x.name.localeCompare(y.name));
const normal = (s: SchemaBlock) => ({
  attributes: byName(s.attributes),
  // Terraform reports nested blocks by name; the declaration's order is its own.
  blocks: s.block_types
    .map((t) => ({ name: t.type_name, min: t.min_items, max: t.max_items, attributes: byName(t.block.attributes) }))
    .sort((a, b) => a.name.localeCompare(b.name)),
});
const fromTerraform = (b: TfBlock | undefined) =>
  normal({
    attributes: attrs(b),
    block_types: Object.entries(b?.block_types ?? {}).map(([type_name, t]) => ({
      type_name,
      min_items: t.min_items ?? 0,
      max_items: t.max_items ?? 0,
      block: { description: '', attributes: attrs(t.block) },
    })),
  });

describe.skipIf(!HAVE_TERRAFORM)('terraform: provider schema and gateway_api_key.user_key_address', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  const tf = (args: string[]) => terraform(dir, args, env);
  const keyId = (): string => {
    const s = JSON.parse(readFileSync(join(dir, 'terraform.tfstate'), 'utf8')) as {
      resources: { type: string; instances: { attributes: { id: string; user_key_address: string | null } }[] }[];
    };
    const a = s.resources.find((r) => r.type === 'gateway_api_key')?.instances[0]?.attributes;
    return a?.id ?? '';
  };
  const keys = async () =>
    ((await g.must(apikeyOp('ListApiKeys'), { customerId: 'tfkeys', includeRevoked: true })).apiKeys ?? []) as {
      id: string;
      keyAddress: string;
      revokedAt?: string;
    }[];

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config('bob@example.com') });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('the schema terraform reads from the built provider is the one the L1 constructs are generated from', async () => {
    const r = await tf(['providers', 'schema', '-json']);
    expect(r.code, r.out).toBe(0);
    const json = JSON.parse(r.out.slice(r.out.indexOf('{'), r.out.lastIndexOf('}') + 1)) as {
      provider_schemas: Record<
        string,
        { resource_schemas: Record<string, { block: TfBlock }>; data_source_schemas: Record<string, { block: TfBlock }> }
      >;
    };
    const p = json.provider_schemas['gateway.local/gateway/gateway'];
    expect(Object.keys(p?.resource_schemas ?? {}).sort()).toEqual(RESOURCES.map((d) => d.type).sort());
    expect(Object.keys(p?.data_source_schemas ?? {}).sort()).toEqual(DATA_SOURCES.map((d) => d.type).sort());
    for (const d of RESOURCES)
      expect([d.type, fromTerraform(p?.resource_schemas[d.type]?.block)]).toEqual([d.type, normal(protocolSchema(d))]);
    for (const d of DATA_SOURCES)
      expect([d.type, fromTerraform(p?.data_source_schemas[d.type]?.block)]).toEqual([d.type, normal(protocolSchema(d))]);
    const apiKey = p?.resource_schemas.gateway_api_key?.block.attributes?.user_key_address;
    expect(apiKey).toMatchObject({ type: 'string', optional: true });
  }, 60_000);

  test('user_key_address reaches CreateApiKey (the key address is derived from it); a second plan is empty', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    const k = (await keys()).find((x) => x.id === keyId());
    expect(k?.keyAddress).toBe(xxhash64Hex('bob@example.com'));
    const p = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(p.code, p.out).toBe(0);
  }, 60_000);

  test('a changed user_key_address replaces the key (the old one is revoked)', async () => {
    const before = keyId();
    writeFileSync(join(dir, 'main.tf'), config('carol@example.com'));
    const p = await tf(['plan', '-input=false', '-no-color']);
    expect(p.out).toContain('# gateway_api_key.k must be replaced');
    expect(p.out).toContain('"bob@example.com" -> "carol@example.com" # forces replacement');
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    const after = keyId();
    expect(after).not.toBe(before);
    const all = await keys();
    expect(all.find((x) => x.id === after)?.keyAddress).toBe(xxhash64Hex('carol@example.com'));
    expect(all.find((x) => x.id === before)?.revokedAt).toBeString();
  }, 60_000);

  test('a user_key_address over 255 characters fails at plan, naming the attribute', async () => {
    writeFileSync(join(dir, 'main.tf'), config('x'.repeat(256)));
    const p = await tf(['plan', '-input=false', '-no-color']);
    expect(p.code).toBe(1);
    expect(p.out).toContain('Invalid value for user_key_address');
    writeFileSync(join(dir, 'main.tf'), config('carol@example.com'));
    const d = await tf(['destroy', '-auto-approve', '-input=false', '-no-color']);
    expect(d.code, d.out).toBe(0);
    expect((await keys()).filter((x) => !x.revokedAt)).toEqual([]);
  }, 60_000);
});
