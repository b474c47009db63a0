import * as grpc from '@grpc/grpc-js';
import { ApiError, GatewayClient } from './client.ts';
import { apply, diag, type Diagnostic, IMPORTED, importState, plan, read, validateConfig, WARNING } from './engine.ts';
import { DATA_SOURCES, RESOURCES } from './registry.ts';
import type { DataSourceDef, ResourceDef } from './resource.ts';
import { providerSchema, resourceSchema } from './tfschema.ts';
import { makeServerCert } from './tls.ts';
import { type Cty, type CtyObject, decodeDynamic, type DynamicValue, encodeDynamic, isUnknown, loadPackageDefinition } from './wire.ts';

/**
 * terraform-provider-gateway: a protocol-6 Terraform provider served over go-plugin's gRPC
 * transport with AutoMTLS. Logs go to stderr (Terraform shows them under TF_LOG); stdout carries
 * only the handshake line.
 */

const MAGIC_KEY = 'TF_PLUGIN_MAGIC_COOKIE';
const MAGIC_VALUE = 'd602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2';

const log = (msg: string): void => {
  process.stderr.write(`[gateway-provider] ${msg}\n`);
};

const resources = new Map<string, ResourceDef>(RESOURCES.map((r) => [r.type, r]));
const dataSources = new Map<string, DataSourceDef>(DATA_SOURCES.map((d) => [d.type, d]));
let client: GatewayClient | undefined;

/** The resource was imported and not applied since (its private state, see engine.ts IMPORTED). */
const isImported = (p: unknown): boolean => p instanceof Uint8Array && Buffer.from(p).toString('utf8') === IMPORTED;
const obj = (v: Cty): CtyObject | null => (v && typeof v === 'object' && !Array.isArray(v) && !isUnknown(v) ? v : null);
const errorDiag = (e: unknown): Diagnostic =>
  diag(e instanceof ApiError ? 'Gateway API error' : 'Provider error', e instanceof Error ? e.message : 'unexpected error');

/** Said on every plan while an imported resource's write-only version is adopted but not yet recorded. */
const adoptionWarning = (attr: string, value: Cty): Diagnostic => ({
  severity: WARNING,
  summary: `${attr} adopted from the configuration after the import`,
  detail: `${attr} = ${JSON.stringify(value)} is taken as the version of the secret the gateway holds (no API call, nothing re-sent). The state records it at this resource's next apply; until then a changed ${attr} cannot be told from the adopted one and does not send ${attr.replace(/_version$/, '')} again: apply another change of the resource first, or re-import after rotating.`,
  attribute: { steps: [{ attribute_name: attr }] },
});

/** Full object (every attribute present) for the schema: cty rejects a missing key. */
const complete = (def: ResourceDef | DataSourceDef, v: CtyObject | null): Cty => {
  if (!v) return null;
  const out: CtyObject = {};
  for (const a of def.attrs) out[a.tf] = v[a.tf] ?? null;
  if ('blocks' in def) for (const b of def.blocks ?? []) out[b.tf] = v[b.tf] ?? [];
  return out;
};

type Handler = (req: Record<string, unknown>) => Promise<Record<string, unknown>>;
const unary =
  (fn: Handler) =>
  (call: grpc.ServerUnaryCall<Record<string, unknown>, Record<string, unknown>>, cb: grpc.sendUnaryData<Record<string, unknown>>) => {
    fn(call.request).then(
      (r) => cb(null, r),
      (e: unknown) => cb(null, { diagnostics: [errorDiag(e)] }),
    );
  };

const needClient = (): GatewayClient => {
  if (!client) throw new Error('the provider is not configured (endpoint and token)');
  return client;
};

const resourceOf = (name: unknown): ResourceDef => {
  const r = resources.get(String(name));
  if (!r) throw new Error(`unknown resource type ${String(name)}`);
  return r;
};

const providerService: Record<string, Handler> = {
  GetMetadata: async () => ({
    server_capabilities: { plan_destroy: true, get_provider_schema_optional: false, move_resource_state: false },
    resources: RESOURCES.map((r) => ({ type_name: r.type })),
    data_sources: DATA_SOURCES.map((d) => ({ type_name: d.type })),
    diagnostics: [],
  }),
  GetProviderSchema: async () => ({
    provider: providerSchema(),
    resource_schemas: Object.fromEntries(RESOURCES.map((r) => [r.type, resourceSchema(r)])),
    data_source_schemas: Object.fromEntries(DATA_SOURCES.map((d) => [d.type, resourceSchema(d)])),
    server_capabilities: { plan_destroy: true, get_provider_schema_optional: false, move_resource_state: false },
    diagnostics: [],
  }),
  ValidateProviderConfig: async () => ({ diagnostics: [] }),
  ConfigureProvider: async (req) => {
    const cfg = obj(decodeDynamic(req.config as DynamicValue)) ?? {};
    const endpoint = (typeof cfg.endpoint === 'string' && cfg.endpoint) || process.env.GATEWAY_ENDPOINT || '';
    const token = (typeof cfg.token === 'string' && cfg.token) || process.env.GATEWAY_TOKEN || '';
    const diagnostics: Diagnostic[] = [];
    if (!endpoint)
      diagnostics.push(diag('Missing endpoint', 'set the provider endpoint or GATEWAY_ENDPOINT', [{ attribute_name: 'endpoint' }]));
    if (!token) diagnostics.push(diag('Missing token', 'set the provider token or GATEWAY_TOKEN', [{ attribute_name: 'token' }]));
    if (diagnostics.length === 0) client = new GatewayClient({ endpoint, token });
    return { diagnostics };
  },
  ValidateResourceConfig: async (req) => {
    const def = resourceOf(req.type_name);
    return { diagnostics: validateConfig(def, obj(decodeDynamic(req.config as DynamicValue)) ?? {}) };
  },
  ValidateDataResourceConfig: async (req) => {
    const def = dataSources.get(String(req.type_name));
    return { diagnostics: def ? validateConfig(def, obj(decodeDynamic(req.config as DynamicValue)) ?? {}) : [] };
  },
  UpgradeResourceState: async (req) => {
    const def = resourceOf(req.type_name);
    const raw = req.raw_state as { json?: Uint8Array } | undefined;
    const parsed = raw?.json && raw.json.length > 0 ? (JSON.parse(Buffer.from(raw.json).toString('utf8')) as CtyObject) : null;
    return { upgraded_state: encodeDynamic(complete(def, parsed)), diagnostics: [] };
  },
  ReadResource: async (req) => {
    const def = resourceOf(req.type_name);
    const state = obj(decodeDynamic(req.current_state as DynamicValue));
    const fresh = state ? await read(needClient(), def, state) : null;
    return { new_state: encodeDynamic(complete(def, fresh)), private: req.private ?? Buffer.alloc(0), diagnostics: [] };
  },
  PlanResourceChange: async (req) => {
    const def = resourceOf(req.type_name);
    const prior = obj(decodeDynamic(req.prior_state as DynamicValue));
    const proposed = obj(decodeDynamic(req.proposed_new_state as DynamicValue));
    // A create is checked again, now that values from other resources are known (validate saw them
    // unknown). Not an update: Terraform hands it a configuration with ignore_changes applied (the
    // prior values, e.g. an imported secret's null), which is not what the user wrote.
    const config = obj(decodeDynamic(req.config as DynamicValue));
    const refused = !prior && proposed && config ? validateConfig(def, config) : [];
    if (refused.length > 0)
      return {
        planned_state: req.proposed_new_state,
        requires_replace: [],
        planned_private: req.prior_private ?? Buffer.alloc(0),
        diagnostics: refused,
      };
    const p = plan(def, prior, proposed, isImported(req.prior_private));
    return {
      planned_state: encodeDynamic(complete(def, p.planned)),
      requires_replace: p.requiresReplace.map((steps) => ({ steps })),
      planned_private: req.prior_private ?? Buffer.alloc(0),
      // An adoption plans the prior state although the configuration sets the version: tolerated
      // as a legacy-type-system plan (Terraform logs it at WARN), and said in a warning.
      ...(p.adopted ? { legacy_type_system: true } : {}),
      diagnostics: (p.adopted ?? []).map(({ attr, value }) => adoptionWarning(attr, value)),
    };
  },
  ApplyResourceChange: async (req) => {
    const def = resourceOf(req.type_name);
    const prior = obj(decodeDynamic(req.prior_state as DynamicValue));
    const planned = obj(decodeDynamic(req.planned_state as DynamicValue));
    const config = obj(decodeDynamic(req.config as DynamicValue)) ?? {};
    try {
      const next = await apply(needClient(), def, prior, planned, config, isImported(req.planned_private));
      return { new_state: encodeDynamic(complete(def, next)), private: Buffer.alloc(0), diagnostics: [] };
    } catch (e) {
      // On failure the state stays what it was (a failed create leaves nothing).
      return { new_state: encodeDynamic(complete(def, prior)), private: Buffer.alloc(0), diagnostics: [errorDiag(e)] };
    }
  },
  ImportResourceState: async (req) => {
    const def = resourceOf(req.type_name);
    const s = importState(def, String(req.id ?? ''));
    if (typeof s === 'string') return { imported_resources: [], diagnostics: [diag('Invalid import id', s)] };
    return {
      imported_resources: [{ type_name: def.type, state: encodeDynamic(complete(def, s)), private: Buffer.from(IMPORTED) }],
      diagnostics: [],
    };
  },
  ReadDataSource: async (req) => {
    const def = dataSources.get(String(req.type_name));
    if (!def) throw new Error(`unknown data source ${String(req.type_name)}`);
    const config = obj(decodeDynamic(req.config as DynamicValue)) ?? {};
    return { state: encodeDynamic(complete(def, await def.read(needClient(), config))), diagnostics: [] };
  },
  GetFunctions: async () => ({ functions: {}, diagnostics: [] }),
  StopProvider: async () => ({ Error: '' }),
};

const main = async (): Promise<void> => {
  if (process.env[MAGIC_KEY] !== MAGIC_VALUE) {
    process.stderr.write('This binary is a plugin for Terraform; it is not meant to be run directly.\n');
    process.exit(1);
  }
  const defs = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as Record<
    string,
    Record<string, Record<string, { service: grpc.ServiceDefinition }>>
  >;
  const tfplugin6 = defs.tfplugin6 as unknown as Record<string, { service: grpc.ServiceDefinition }>;
  const plugin = defs.plugin as unknown as Record<string, { service: grpc.ServiceDefinition }>;
  const health = (defs.grpc as unknown as Record<string, Record<string, Record<string, { service: grpc.ServiceDefinition }>>>).health
    ?.v1 as Record<string, { service: grpc.ServiceDefinition }>;
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
    'grpc.max_send_message_length': 256 * 1024 * 1024,
  });
  const impl: grpc.UntypedServiceImplementation = {};
  for (const [name, fn] of Object.entries(providerService)) impl[name] = unary(fn);
  server.addService((tfplugin6.Provider as { service: grpc.ServiceDefinition }).service, impl);
  server.addService((plugin.GRPCController as { service: grpc.ServiceDefinition }).service, {
    Shutdown: (_call: unknown, cb: grpc.sendUnaryData<object>) => {
      cb(null, {});
      setTimeout(() => process.exit(0), 10);
    },
  });
  server.addService((plugin.GRPCStdio as { service: grpc.ServiceDefinition }).service, {
    StreamStdio: (call: grpc.ServerWritableStream<object, object>) => call.end(),
  });
  server.addService((health.Health as { service: grpc.ServiceDefinition }).service, {
    Check: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { status: 1 }),
  });

  const clientCert = process.env.PLUGIN_CLIENT_CERT;
  let creds: grpc.ServerCredentials;
  let certField = '';
  if (clientCert) {
    const cert = await makeServerCert();
    creds = grpc.ServerCredentials.createSsl(
      Buffer.from(clientCert),
      [{ private_key: Buffer.from(cert.keyPem), cert_chain: Buffer.from(cert.certPem) }],
      true,
    );
    certField = cert.derB64;
  } else creds = grpc.ServerCredentials.createInsecure();

  const min = Number(process.env.PLUGIN_MIN_PORT ?? 0);
  const max = Number(process.env.PLUGIN_MAX_PORT ?? 0);
  const bind = (port: number) =>
    new Promise<number>((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, creds, (err, p) => (err ? reject(err) : resolve(p))));
  let port = 0;
  if (min > 0 && max >= min) {
    for (let i = 0; i < 50 && port === 0; i++) {
      try {
        port = await bind(min + Math.floor(Math.random() * (max - min + 1)));
      } catch {
        port = 0;
      }
    }
  }
  if (port === 0) port = await bind(0);
  process.on('SIGINT', () => log('interrupt received; waiting for Terraform to stop the provider'));
  process.stdout.write(`1|6|tcp|127.0.0.1:${port}|grpc${certField ? `|${certField}` : ''}\n`);
};

main().catch((e: unknown) => {
  log(`fatal: ${e instanceof Error ? e.message : 'unknown error'}`);
  process.exit(1);
});
