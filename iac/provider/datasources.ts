import type { GatewayClient, JsonObject } from './client.ts';
import { type DataSourceDef, stateFrom, str } from './resource.ts';
import { RESOURCES_DECLARED } from './resources.ts';
import { type Attr, computed, field } from './schema.ts';
import type { Cty, CtyObject } from './wire.ts';

/** Data sources: a customer, a project, the catalog's models. Their attributes mirror the resources'. */

const asComputed = (attrs: Attr[], inputs: string[]): Attr[] =>
  attrs.map((a) =>
    inputs.includes(a.tf)
      ? { ...a, required: true, optional: false, computed: false }
      : { ...a, required: false, optional: false, computed: true },
  );

const fromResource = (type: string, inputs: string[], get: string, envelope: string): DataSourceDef => {
  const res = RESOURCES_DECLARED.find((r) => r.type === type);
  if (!res) throw new Error(`no resource ${type}`);
  const attrs = asComputed(res.attrs, inputs);
  return {
    type,
    description: `Reads an existing ${type.replace('gateway_', '')}.`,
    attrs,
    read: async (c: GatewayClient, config: CtyObject) => {
      const body: JsonObject = Object.fromEntries(attrs.filter((a) => inputs.includes(a.tf)).map((a) => [a.api, str(config[a.tf])]));
      const r = await c.callJson(get, body);
      return stateFrom({ ...res, attrs }, r[envelope] as JsonObject, config);
    },
  };
};

const MODEL_TYPE = {
  id: 'string',
  model: 'string',
  provider_name: 'string',
  mode: 'string',
  capabilities: ['list', 'string'],
  context_window: 'number',
  max_output_tokens: 'number',
  input_price_per_million: 'number',
  output_price_per_million: 'number',
  cached_price_per_million: 'number',
  cache_write_price_per_million: 'number',
  is_enabled: 'bool',
} as const;

const modelRow = (m: JsonObject): CtyObject => {
  const out: CtyObject = {};
  for (const k of Object.keys(MODEL_TYPE)) {
    const api = k === 'provider_name' ? 'provider' : k.replace(/_([a-z])/g, (_x, ch: string) => ch.toUpperCase());
    const v = m[api];
    out[k] = (Array.isArray(v) ? v.map(String) : (v ?? null)) as Cty;
  }
  return out;
};

const models: DataSourceDef = {
  type: 'gateway_models',
  description: 'The catalog models (optionally of one provider).',
  attrs: [
    { ...field('ListModels', 'provider', { tf: 'provider_name', optionalComputed: false }), forceNew: false },
    computed('models', 'models', 'json', 'the catalog entries', { cty: ['list', ['object', MODEL_TYPE]] }),
  ],
  read: async (c, config) => {
    const rows: CtyObject[] = [];
    let token = '';
    do {
      const r = await c.callJson('ListModels', {
        pageSize: 1000,
        ...(config.provider_name ? { provider: str(config.provider_name) } : {}),
        ...(token ? { pageToken: token } : {}),
      });
      for (const m of Array.isArray(r.models) ? r.models : []) if (m && typeof m === 'object' && !Array.isArray(m)) rows.push(modelRow(m));
      token = typeof r.nextPageToken === 'string' ? r.nextPageToken : '';
    } while (token);
    return { provider_name: config.provider_name ?? null, models: rows };
  },
};

export const DATA_SOURCES_ALL: DataSourceDef[] = [
  fromResource('gateway_customer', ['customer_id'], 'GetCustomer', 'customer'),
  fromResource('gateway_project', ['customer_id', 'project_id'], 'GetProject', 'project'),
  models,
];
