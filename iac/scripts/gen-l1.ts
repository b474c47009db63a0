/// <reference path="../provider/assets.d.ts" />
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { DATA_SOURCES, RESOURCES } from '../provider/registry.ts';
import type { DataSourceDef, ResourceDef } from '../provider/resource.ts';
import type { Attr } from '../provider/schema.ts';
import { resourceSchema } from '../provider/tfschema.ts';

/**
 * `bun iac/scripts/gen-l1.ts`: writes iac/src/l1.ts, the L1 constructs, from the provider's schema —
 * what `cdktf get` does for a registry provider. The input is the schema the provider answers
 * GetProviderSchema with (tfschema.ts: attribute names, required/optional/computed, sensitive,
 * write-only, cty types, descriptions, nested blocks); the enums of string attributes come from the
 * API request schemas the provider validates with. test/iac/l1-generated.test.ts fails when the
 * committed file differs from what this renders (`--check` does the same from the shell).
 */

export const L1_PATH = join(import.meta.dir, '..', 'src', 'l1.ts');

/** One attribute of the protocol schema, as `terraform providers schema -json` shows it. */
export interface SchemaAttribute {
  name: string;
  type: unknown;
  description: string;
  required: boolean;
  optional: boolean;
  computed: boolean;
  sensitive: boolean;
  write_only: boolean;
}
export interface SchemaBlock {
  attributes: SchemaAttribute[];
  block_types: { type_name: string; min_items: number; max_items: number; block: { description: string; attributes: SchemaAttribute[] } }[];
}

const decode = (a: {
  name: string;
  type: Buffer;
  description: string;
  required: boolean;
  optional: boolean;
  computed: boolean;
  sensitive: boolean;
  write_only: boolean;
}): SchemaAttribute => ({
  name: a.name,
  type: JSON.parse(a.type.toString('utf8')),
  description: a.description,
  required: a.required,
  optional: a.optional,
  computed: a.computed,
  sensitive: a.sensitive,
  write_only: a.write_only,
});

/** The protocol schema of a resource or data source, types decoded (the generator's input). */
export const protocolSchema = (def: ResourceDef | DataSourceDef): SchemaBlock => {
  const b = resourceSchema(def).block;
  return {
    attributes: b.attributes.map(decode),
    block_types: b.block_types.map((t) => ({
      type_name: t.type_name,
      min_items: t.min_items,
      max_items: t.max_items,
      block: { description: t.block.description, attributes: t.block.attributes.map(decode) },
    })),
  };
};

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
const pascal = (s: string): string => camel(s).replace(/^[a-z]/, (c) => c.toUpperCase());
export const className = (type: string, data: boolean): string => `${data ? 'Data' : ''}${pascal(type.replace(/^gateway_/, ''))}`;

/** Literal values of an enum schema (anyOf of consts, null aside); undefined otherwise. */
const literals = (s: TSchema | undefined): string[] | undefined => {
  if (!s) return undefined;
  const any = (s as { anyOf?: TSchema[] }).anyOf;
  if (!any) return undefined;
  const nonNull = any.filter((x) => (x as { type?: string }).type !== 'null');
  const consts = nonNull.map((x) => (x as { const?: unknown }).const);
  if (consts.length > 0 && consts.every((c) => typeof c === 'string')) return consts.filter((c): c is string => typeof c === 'string');
  return nonNull.length === 1 ? literals(nonNull[0]) : undefined;
};

const itemsOf = (s: TSchema | undefined): TSchema | undefined => {
  if (!s) return undefined;
  const items = (s as { items?: TSchema }).items;
  if (items) return items;
  const any = (s as { anyOf?: TSchema[] }).anyOf?.filter((x) => (x as { type?: string }).type !== 'null');
  return any?.length === 1 ? itemsOf(any[0]) : undefined;
};

const union = (values: string[]): string => values.map((v) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(' | ');

/** The TypeScript type of a configurable attribute. */
const propType = (a: SchemaAttribute, api: Attr | undefined): string => {
  const t = a.type;
  if (t === 'string') {
    if (api?.kind === 'json') return 'Record<string, unknown>';
    const lit = literals(api?.schema);
    return lit ? union(lit) : 'string';
  }
  if (t === 'number') return 'number';
  if (t === 'bool') return 'boolean';
  if (Array.isArray(t) && t[0] === 'list' && t[1] === 'string') {
    const lit = literals(itemsOf(api?.schema));
    return lit ? `(${union(lit)})[]` : 'string[]';
  }
  if (Array.isArray(t) && t[0] === 'map' && t[1] === 'string') return 'Record<string, string>';
  throw new Error(`no TypeScript type for cty ${JSON.stringify(t)} (${a.name})`);
};

/** A getter's type and the base method reading the attribute as a token. */
const getterOf = (a: SchemaAttribute): [string, string] => {
  const t = a.type;
  if (t === 'string') return ['string', 'getStringAttribute'];
  if (t === 'number') return ['number', 'getNumberAttribute'];
  if (t === 'bool') return ['IResolvable', 'getBooleanAttribute'];
  if (Array.isArray(t) && t[0] === 'list' && t[1] === 'string') return ['string[]', 'getListAttribute'];
  if (Array.isArray(t) && t[0] === 'map' && t[1] === 'string') return ['Record<string, string>', 'getStringMapAttribute'];
  return ['IResolvable', 'interpolationForAttribute'];
};

const doc = (lines: string[], indent = ''): string => {
  const text = lines.filter(Boolean).join(' ').replace(/\*\//g, '*\\/');
  return `${indent}/** ${text} */`;
};

const sentence = (s: string): string => {
  const t = s.trim();
  return t === '' ? '' : `${t[0]?.toUpperCase() ?? ''}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
};

/** Bounds of a schema in words, for attributes whose API field has no description. */
const bounds = (s: TSchema | undefined): string => {
  if (!s) return '';
  const any = (s as { anyOf?: TSchema[] }).anyOf?.filter((x) => (x as { type?: string }).type !== 'null');
  const u = (any?.length === 1 && any[0] ? any[0] : s) as {
    minLength?: number;
    maxLength?: number;
    minimum?: number;
    maximum?: number;
    maxItems?: number;
    pattern?: string;
    items?: TSchema;
  };
  const parts: string[] = [];
  if (u.maxLength !== undefined) parts.push(`${u.minLength ?? 0}-${u.maxLength} characters`);
  if (u.maximum !== undefined) parts.push(`${u.minimum ?? 0}..${u.maximum}`);
  if (u.maxItems !== undefined) parts.push(`at most ${u.maxItems} items`);
  const item = u.items ? bounds(u.items) : '';
  if (item) parts.push(`each ${item}`);
  if (u.pattern) parts.push(`matching \`${u.pattern}\``);
  return parts.join(', ');
};

const attrDoc = (a: SchemaAttribute, api: Attr | undefined): string[] => [
  sentence(a.description === a.name ? bounds(api?.schema) || `\`${a.name}\`` : a.description),
  a.write_only && !/write-only/i.test(a.description) ? 'Write-only (Terraform >= 1.11): never stored in state.' : '',
  a.sensitive ? 'Sensitive.' : '',
];

const configurable = (a: SchemaAttribute): boolean => a.required || a.optional;

const props = (name: string, attrs: SchemaAttribute[], apiAttrs: Attr[], meta: boolean): string => {
  const lines = attrs.filter(configurable).flatMap((a) => {
    const api = apiAttrs.find((x) => x.tf === a.name);
    return [doc(attrDoc(a, api), '  '), `  readonly ${camel(a.name)}${a.required ? '' : '?'}: ${propType(a, api)};`];
  });
  return `export interface ${name}${meta ? ' extends Meta' : ''} {\n${lines.join('\n')}\n}`;
};

/** Members the cdktf base classes define: no getter may shadow them. */
const RESERVED = new Set([
  'id',
  'attr',
  'node',
  'fqn',
  'friendlyUniqueId',
  'terraformResourceType',
  'terraformGeneratorMetadata',
  'terraformMetaArguments',
  'dependsOn',
  'count',
  'provider',
  'lifecycle',
  'forEach',
  'provisioners',
  'connection',
  'rawOverrides',
  'cdktfStack',
]);

const getters = (attrs: SchemaAttribute[], apiAttrs: Attr[]): string[] =>
  attrs
    // A write-only value is never in state: there is nothing to refer to.
    .filter((a) => !a.write_only && !RESERVED.has(camel(a.name)))
    .map((a) => {
      const [type, method] = getterOf(a);
      return `${doc(
        attrDoc(
          a,
          apiAttrs.find((x) => x.tf === a.name),
        ),
        '  ',
      )}\n  get ${camel(a.name)}(): ${type} {\n    return this.${method}('${a.name}');\n  }`;
    });

const importDoc = (def: ResourceDef): string => {
  const natural = def.importKeys.map((k) => (k === 'id' ? '<UUID>' : `<${camel(k)}>`)).join('/');
  return def.parseImport ? `Import id: \`${natural}\` or the bare UUID.` : `Import id: \`${natural}\`.`;
};

const resource = (def: ResourceDef): string => {
  const cls = className(def.type, false);
  const schema = protocolSchema(def);
  const out: string[] = [];
  const blocks: [string, string][] = [];
  const blockProps: string[] = [];
  for (const b of schema.block_types) {
    const iface = `${cls}${pascal(b.type_name)}`;
    const apiBlock = def.blocks?.find((x) => x.tf === b.type_name);
    out.push(props(iface, b.block.attributes, apiBlock?.attrs ?? [], false));
    const prop = `${camel(b.type_name)}s`;
    blocks.push([prop, b.type_name]);
    blockProps.push(
      doc([sentence(b.block.description), `${b.min_items}-${b.max_items} \`${b.type_name}\` blocks, kept in the order given.`], '  '),
      `  readonly ${prop}${b.min_items > 0 ? '' : '?'}: ${iface}[];`,
    );
  }
  const base = props(`${cls}Props`, schema.attributes, def.attrs, true);
  out.push(blockProps.length ? base.replace(/\n}$/, `\n${blockProps.join('\n')}\n}`) : base);
  const secrets = schema.attributes.filter((a) => configurable(a) && (a.sensitive || a.write_only)).map((a) => `'${a.name}'`);
  const blockArg = blocks.length ? `, { ${blocks.map(([p, t]) => `${p}: '${t}'`).join(', ')} }` : secrets.length ? ', {}' : '';
  const secretArg = secrets.length ? `, [${secrets.join(', ')}]` : '';
  out.push(
    [
      doc([`\`${def.type}\`: ${sentence(def.description)}`, importDoc(def)]),
      `export class ${cls} extends GatewayResource<${cls}Props> {`,
      `  static readonly tfResourceType = '${def.type}';`,
      `  constructor(scope: Construct, id: string, props: ${cls}Props) {`,
      `    super(scope, id, '${def.type}', props${blockArg}${secretArg});`,
      '  }',
      ...getters(schema.attributes, def.attrs),
      '}',
    ].join('\n'),
  );
  return out.join('\n');
};

const dataSource = (def: DataSourceDef): string => {
  const cls = className(def.type, true);
  const schema = protocolSchema(def);
  const anyRequired = schema.attributes.some((a) => a.required);
  return [
    props(`${cls}Props`, schema.attributes, def.attrs, true),
    doc([`Data source \`${def.type}\`: ${sentence(def.description)}`]),
    `export class ${cls} extends GatewayDataSource<${cls}Props> {`,
    `  static readonly tfResourceType = '${def.type}';`,
    `  constructor(scope: Construct, id: string, props: ${cls}Props${anyRequired ? '' : ' = {}'}) {`,
    `    super(scope, id, '${def.type}', props);`,
    '  }',
    ...getters(schema.attributes, def.attrs),
    '}',
  ].join('\n');
};

/** The whole generated module. */
export const renderL1 = (): string =>
  `${[
    '// Generated by `bun iac/scripts/gen-l1.ts` from the provider schema (iac/provider/registry.ts). Do not edit.',
    "import type { IResolvable, TerraformMetaArguments } from 'cdktf';",
    "import type { Construct } from 'constructs';",
    "import { GatewayDataSource, GatewayResource } from './base.ts';",
    '',
    '/**',
    ' * L1 constructs: one class per provider resource and data source, props named after the',
    " * management API's fields (camelCase here, snake_case in Terraform). Bounds, patterns and enums",
    " * are checked by the provider at plan time, from the API's own schemas.",
    ' */',
    '',
    'type Meta = TerraformMetaArguments;',
    '',
    ...RESOURCES.flatMap((d) => [resource(d), '']),
    ...DATA_SOURCES.flatMap((d) => [dataSource(d), '']),
    '/** A catalog capability tag (`gateway_model.capabilities`). */',
    "export type Capability = NonNullable<ModelProps['capabilities']>[number];",
  ].join('\n')}\n`;

if (import.meta.main) {
  const next = renderL1();
  const current = readFileSync(L1_PATH, 'utf8');
  if (process.argv.includes('--check')) {
    if (current !== next) {
      process.stderr.write(`gen-l1: ${L1_PATH} is stale; run bun iac/scripts/gen-l1.ts\n`);
      process.exit(1);
    }
    process.stdout.write('gen-l1: up to date\n');
  } else {
    if (current !== next) writeFileSync(L1_PATH, next);
    process.stdout.write(`gen-l1: ${current === next ? 'unchanged' : 'wrote'} ${L1_PATH}\n`);
  }
}
