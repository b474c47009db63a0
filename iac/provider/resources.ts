import type { GatewayClient, JsonObject } from './client.ts';
import { type BlockDef, envelopeOf, orGone, type ResourceDef, str } from './resource.ts';
import { type Attr, computed, field } from './schema.ts';
import { fieldSchema } from './api-schemas.ts';
import type { CtyObject } from './wire.ts';

/**
 * The resources. Each names its operations and fields; types, bounds, patterns, enums and
 * which fields can change in place come from the operations' schemas (see schema.ts).
 */

const ID = computed('id', 'id', 'string', 'server-generated UUID');

/** A resource whose Get/Update/Delete take its natural key fields. */
const keyed = (o: {
  type: string;
  description: string;
  create: string;
  get: string;
  update?: string;
  del: string;
  envelope: string;
  keys: Attr[];
  fields: Attr[];
  blocks?: BlockDef[];
  /** Reads through a list when there is no Get. */
  read?: (c: GatewayClient, s: CtyObject) => Promise<JsonObject | null>;
}): ResourceDef => {
  const keyBody = (s: CtyObject): JsonObject => Object.fromEntries(o.keys.map((k) => [k.api, str(s[k.tf])]));
  return {
    type: o.type,
    description: o.description,
    attrs: [ID, ...o.keys, ...o.fields],
    ...(o.blocks ? { blocks: o.blocks } : {}),
    importKeys: o.keys.map((k) => k.tf),
    create: async (c, body) => envelopeOf(await c.callJson(o.create, body), o.envelope),
    read: o.read ?? ((c, s) => orGone(c.callJson(o.get, keyBody(s)), o.envelope)),
    ...(o.update ? { update: async (c: GatewayClient, body: JsonObject) => envelopeOf(await c.callJson(o.update ?? '', body), o.envelope) } : {}),
    delete: async (c, s) => {
      await c.callJson(o.del, keyBody(s));
    },
  };
};

/** A resource whose Get/Update/Delete take its UUID (in request field `idField`). */
const byId = (o: {
  type: string;
  description: string;
  create: string;
  get: string;
  update?: string;
  del: string;
  envelope: string;
  idField: string;
  fields: Attr[];
}): ResourceDef => ({
  type: o.type,
  description: o.description,
  attrs: [ID, ...o.fields],
  importKeys: ['id'],
  create: async (c, body) => envelopeOf(await c.callJson(o.create, body), o.envelope),
  read: (c, s) => orGone(c.callJson(o.get, { [o.idField]: str(s.id) }), o.envelope),
  ...(o.update
    ? {
        update: async (c: GatewayClient, body: JsonObject, prior: CtyObject) => {
          const { id: _id, ...rest } = body;
          return envelopeOf(await c.callJson(o.update ?? '', { ...rest, [o.idField]: str(prior.id) }), o.envelope);
        },
      }
    : {}),
  delete: async (c, s) => {
    await c.callJson(o.del, { [o.idField]: str(s.id) });
  },
});

const common = (create: string, update: string) => [
  field(create, 'name', { update }),
  field(create, 'description', { update }),
  field(create, 'labels', { update }),
];

const customer = keyed({
  type: 'gateway_customer',
  description: 'A customer (tenant); created with its default project.',
  create: 'CreateCustomer',
  get: 'GetCustomer',
  update: 'UpdateCustomer',
  del: 'DeleteCustomer',
  envelope: 'customer',
  keys: [field('CreateCustomer', 'customerId')],
  fields: common('CreateCustomer', 'UpdateCustomer'),
});

const project = keyed({
  type: 'gateway_project',
  description: 'A project of a customer.',
  create: 'CreateProject',
  get: 'GetProject',
  update: 'UpdateProject',
  del: 'DeleteProject',
  envelope: 'project',
  keys: [field('CreateProject', 'customerId'), field('CreateProject', 'projectId')],
  fields: common('CreateProject', 'UpdateProject'),
});

const MODEL_FIELDS = [
  'mode',
  'capabilities',
  'contextWindow',
  'maxOutputTokens',
  'inputPricePerMillion',
  'outputPricePerMillion',
  'cachedPricePerMillion',
  'cacheWritePricePerMillion',
  'isEnabled',
] as const;

const model = byId({
  type: 'gateway_model',
  description: 'A catalog model (AIModel).',
  create: 'CreateModel',
  get: 'GetModel',
  update: 'UpdateModel',
  del: 'DeleteModel',
  envelope: 'model',
  idField: 'modelId',
  fields: [
    field('CreateModel', 'model', { update: 'UpdateModel' }),
    field('CreateModel', 'provider', { tf: 'provider_name', update: 'UpdateModel' }),
    ...MODEL_FIELDS.map((f) => field('CreateModel', f, { update: 'UpdateModel' })),
  ],
});

const projectIdOptional = (create: string): Attr => ({ ...field(create, 'projectId'), forceNew: true, description: "project slug; unset means the customer's default project" });

const connection = keyed({
  type: 'gateway_provider_connection',
  description: 'A provider connection (credentials and settings of one upstream provider) in a project.',
  create: 'CreateProviderConnection',
  get: 'GetProviderConnection',
  update: 'UpdateProviderConnection',
  del: 'DeleteProviderConnection',
  envelope: 'connection',
  keys: [field('CreateProviderConnection', 'customerId'), projectIdOptional('CreateProviderConnection'), field('CreateProviderConnection', 'name')],
  fields: [
    field('CreateProviderConnection', 'provider', { tf: 'provider_name', update: 'UpdateProviderConnection' }),
    field('CreateProviderConnection', 'baseUrl', { update: 'UpdateProviderConnection' }),
    field('CreateProviderConnection', 'options', { update: 'UpdateProviderConnection' }),
    {
      ...field('CreateProviderConnection', 'apiKey', { update: 'UpdateProviderConnection', optionalComputed: false, sensitive: true, keep: true }),
      description: 'the secret; kept in state as given, never read back (an out-of-band change is not detected)',
    },
    {
      ...field('CreateProviderConnection', 'apiKey', { tf: 'api_key_wo', optionalComputed: false, sensitive: true, keep: true }),
      writeOnly: true,
      forceNew: false,
      updatable: false,
      description: 'write-only form of api_key (Terraform >= 1.11): never stored in state; bump api_key_wo_version to send a new one',
    },
    {
      tf: 'api_key_wo_version',
      api: 'apiKeyWoVersion',
      kind: 'number',
      optional: true,
      keep: true,
      local: true,
      description: 'change it to send api_key_wo again',
    },
  ],
});

connection.amend = (body, prior, plan, config) => {
  // The write-only key is sent on create, and on update when its version changes.
  if (prior && JSON.stringify(prior.api_key_wo_version ?? null) !== JSON.stringify(plan.api_key_wo_version ?? null) && typeof config.api_key_wo === 'string')
    body.apiKey = config.api_key_wo;
};
connection.check = (config) =>
  config.api_key != null && config.api_key_wo != null ? [['api_key_wo', 'set either api_key or api_key_wo, not both']] : [];

const Target = fieldSchema('CreateRoute', 'targets') as unknown as { items: { properties: Record<string, unknown> }; minItems?: number; maxItems?: number };
const targetAttr = (name: 'connection' | 'model' | 'priority' | 'weight'): Attr => {
  const s = Target.items.properties[name] as Attr['schema'];
  const required = name === 'connection' || name === 'model';
  return {
    tf: name,
    api: name,
    kind: name === 'priority' || name === 'weight' ? 'number' : 'string',
    description: (s as { description?: string } | undefined)?.description ?? name,
    ...(s ? { schema: s } : {}),
    required,
    optional: !required,
    computed: !required,
    forceNew: false,
    updatable: true,
  };
};

const route = keyed({
  type: 'gateway_route',
  description: 'The route of a public model in a project: ordered targets, fallback by priority, weighted split within one.',
  create: 'CreateRoute',
  get: 'GetRoute',
  update: 'UpdateRoute',
  del: 'DeleteRoute',
  envelope: 'route',
  keys: [field('CreateRoute', 'customerId'), projectIdOptional('CreateRoute'), field('CreateRoute', 'model')],
  fields: [field('CreateRoute', 'enabled', { update: 'UpdateRoute' }), field('CreateRoute', 'timeoutMs', { update: 'UpdateRoute' }), field('CreateRoute', 'maxRetries', { update: 'UpdateRoute' })],
  blocks: [
    {
      tf: 'target',
      api: 'targets',
      attrs: (['connection', 'model', 'priority', 'weight'] as const).map(targetAttr),
      min: Target.minItems ?? 0,
      max: Target.maxItems ?? 0,
      updatable: true,
      description: 'a target, in order: connection (name), upstream model, priority (0 = primary), weight',
    },
  ],
});

export const RESOURCES_CORE: ResourceDef[] = [customer, project, model, connection, route];
export { keyed, byId, common, ID };
