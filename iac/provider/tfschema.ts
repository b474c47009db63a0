import type { DataSourceDef, ResourceDef } from './resource.ts';
import { type Attr, ctyType } from './schema.ts';

/** The protocol's Schema messages for the provider, resources and data sources. */

const NESTING_LIST = 2;
const enc = (t: unknown): Buffer => Buffer.from(JSON.stringify(t));

const attribute = (a: Attr) => ({
  name: a.tf,
  type: enc(a.cty ?? ctyType(a.kind)),
  description: a.description,
  required: Boolean(a.required),
  optional: Boolean(a.optional),
  computed: Boolean(a.computed),
  sensitive: Boolean(a.sensitive),
  write_only: Boolean(a.writeOnly),
  description_kind: 0,
  deprecated: false,
});

export const resourceSchema = (def: ResourceDef | DataSourceDef) => ({
  version: 0,
  block: {
    version: 0,
    description: def.description,
    description_kind: 0,
    deprecated: false,
    attributes: def.attrs.map(attribute),
    block_types: ('blocks' in def ? (def.blocks ?? []) : []).map((b) => ({
      type_name: b.tf,
      nesting: NESTING_LIST,
      min_items: b.min,
      max_items: b.max,
      block: {
        version: 0,
        description: b.description,
        description_kind: 0,
        deprecated: false,
        attributes: b.attrs.map(attribute),
        block_types: [],
      },
    })),
  },
});

export const PROVIDER_ATTRS: Attr[] = [
  {
    tf: 'endpoint',
    api: 'endpoint',
    kind: 'string',
    optional: true,
    description: 'management API base URL (default: env GATEWAY_ENDPOINT)',
  },
  {
    tf: 'token',
    api: 'token',
    kind: 'string',
    optional: true,
    sensitive: true,
    description: 'platform-admin token, user token or service-account JWT (default: env GATEWAY_TOKEN)',
  },
];

export const providerSchema = () => ({
  version: 0,
  block: {
    version: 0,
    description: 'AI gateway management API',
    description_kind: 0,
    deprecated: false,
    attributes: PROVIDER_ATTRS.map(attribute),
    block_types: [],
  },
});
