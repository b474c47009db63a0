import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { App, TerraformStack, Testing } from 'cdktf';
import type { Construct } from 'constructs';
import * as iac from '../../iac/index.ts';
import { className, L1_PATH, protocolSchema, renderL1, type SchemaAttribute } from '../../iac/scripts/gen-l1.ts';
import { DATA_SOURCES, RESOURCES } from '../../iac/provider/registry.ts';

/**
 * The L1 constructs are generated from the provider's schema (issue 23 item 4): the committed file
 * is what the generator renders now, and every class takes exactly the provider's configurable
 * attributes as props and offers its attributes as getters.
 */

type Body = Record<string, unknown>;
type L1Class = (new (scope: Construct, id: string, props: Body) => object) & { tfResourceType?: string };

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

const classOf = (name: string): L1Class => {
  const c: unknown = Object.entries(iac).find(([k]) => k === name)?.[1];
  if (typeof c !== 'function') throw new Error(`iac exports no class ${name}`);
  return c as L1Class;
};

/** A value of the attribute's type (the props are not validated at synthesis). */
const sample = (a: SchemaAttribute, stack: TerraformStack): unknown => {
  // A secret must be a reference (a literal, or a token resolving to one, is refused: it would land in cdktf.out).
  const secret = a.sensitive || a.write_only;
  if (a.name === 'options') return { region: 'eu' };
  if (a.type === 'number') return 7;
  if (a.type === 'bool') return true;
  if (Array.isArray(a.type) && a.type[0] === 'list') return ['a'];
  if (Array.isArray(a.type) && a.type[0] === 'map') return { k: secret ? iac.secretVariable(stack, `v_${a.name}`) : 'v' };
  if (secret) return iac.secretVariable(stack, `v_${a.name}`);
  return `v-${a.name}`;
};

describe('generated L1 constructs', () => {
  test('iac/src/l1.ts is what bun iac/scripts/gen-l1.ts renders from the provider schema (not stale)', () => {
    expect(readFileSync(L1_PATH, 'utf8')).toBe(renderL1());
  });

  for (const [kind, defs] of [
    ['resource', RESOURCES],
    ['data source', DATA_SOURCES],
  ] as const) {
    for (const def of defs) {
      test(`${kind} ${def.type}: props are the configurable attributes, getters the attributes`, () => {
        const cls = classOf(className(def.type, kind === 'data source'));
        expect(cls.tfResourceType).toBe(def.type);
        const schema = protocolSchema(def);
        const settable = schema.attributes.filter((a) => a.required || a.optional);
        const stack = new TerraformStack(new App({ outdir: '/tmp/gw-l1-unused' }), 's');
        const props: Body = Object.fromEntries(settable.map((a) => [camel(a.name), sample(a, stack)]));
        for (const b of schema.block_types)
          props[`${camel(b.type_name)}s`] = [
            Object.fromEntries(b.block.attributes.filter((a) => a.required || a.optional).map((a) => [camel(a.name), sample(a, stack)])),
          ];
        new iac.GatewayProvider(stack, 'gateway');
        const instance = new cls(stack, 'x', props);
        const json = JSON.parse(Testing.synth(stack)) as {
          resource?: Record<string, Record<string, Body>>;
          data?: Record<string, Record<string, Body>>;
        };
        const args = (kind === 'resource' ? json.resource : json.data)?.[def.type]?.x ?? {};
        const given = Object.keys(args).filter((k) => k !== 'provider' && k !== '//');
        expect(given.sort()).toEqual([...settable.map((a) => a.name), ...schema.block_types.map((b) => b.type_name)].sort());
        for (const a of settable) if (a.name === 'options') expect(JSON.parse(String(args.options))).toEqual({ region: 'eu' });
        // Getters: every attribute but write-only ones (never in state) and `id` (the base's).
        const proto = Object.getPrototypeOf(instance) as object;
        for (const a of schema.attributes) {
          const has = Object.getOwnPropertyDescriptor(proto, camel(a.name))?.get !== undefined;
          expect([a.name, has]).toEqual([a.name, !a.write_only && a.name !== 'id']);
        }
      });
    }
  }

  test('gateway_api_key takes user_key_address (the API field userKeyAddress), synthesized in snake_case', () => {
    const stack = new TerraformStack(new App({ outdir: '/tmp/gw-l1-unused' }), 'k');
    new iac.GatewayProvider(stack, 'gateway');
    new iac.ApiKey(stack, 'k', { customerId: 'acme', userKeyAddress: 'bob@example.com' });
    const json = JSON.parse(Testing.synth(stack)) as { resource: Record<string, Record<string, Body>> };
    expect(json.resource.gateway_api_key?.k).toMatchObject({ customer_id: 'acme', user_key_address: 'bob@example.com' });
  });
});
