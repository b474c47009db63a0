import { Type as t } from '@sinclair/typebox';
import { CustomerRef, Deleted, One, PATTERNS, Page, PageSize, PageToken, ProjectRef, Timestamp, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';
import { byokProviderId } from '../../core/byok.ts';
import { isRecord } from '../../core/json.ts';
import { checkHeaderMap, checkHeaderValue } from '../header-values.ts';
import { checkProviderName } from '../providers.ts';
import { defineResource, reqText } from '../resource.ts';

/**
 * Provider connections (contract §3.2): a project's account at an upstream provider — its
 * adapter, base URL, API key (wrapped at rest, never returned) and options. Route targets name
 * them.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Provider connections';

/** Providers whose `apiKey` is not sent as a header value: Vertex takes the Google service-account JSON key (several lines) and signs with it. */
const KEY_NOT_A_HEADER: ReadonlySet<string> = new Set(['vertex']);

/**
 * A connection's credentials must be sendable (contract §17): its `apiKey` (unless the provider
 * does not send it as a header) and every `options.headers` value. The management API and the
 * Terraform provider's plan-time check run this same function.
 */
export const checkConnectionSecrets = (c: { provider: string | null; apiKey?: string | null; options?: unknown }): void => {
  if (c.apiKey) checkProviderKey('apiKey', c.provider, c.apiKey);
  if (isRecord(c.options)) checkHeaderMap('options.headers', c.options.headers);
};

/** A provider key (a connection's `apiKey`, a BYOK `secret`): a header value unless the provider does not send it as one. */
export const checkProviderKey = (field: string, provider: string | null, key: string): void => {
  // A BYOK provider value (`PROVIDER_VERTEX`) names its adapter id.
  const id = provider === null ? null : (byokProviderId(provider) ?? provider);
  if (!(id !== null && KEY_NOT_A_HEADER.has(id))) checkHeaderValue(field, key);
};

const ConnectionName = () =>
  t.String({ minLength: 1, maxLength: 253, pattern: PATTERNS.ID, description: 'connection name (ID pattern), unique within the project' });
const BaseUrl = () =>
  t.Optional(
    t.Union([t.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' }), t.Null()], {
      description: 'overrides the public default',
    }),
  );
const ApiKey = () =>
  t.Optional(t.Union([t.String({ minLength: 1, maxLength: 16384 }), t.Null()], { description: 'secret; wrapped at rest, never returned' }));
const Options = () =>
  t.Optional(t.Record(t.String(), t.Unknown(), { description: 'provider options (Struct): region, apiVersion, deployments, headers, …' }));

/** Identifies a connection by `id`, or by (customerId, projectId, name). */
const ConnectionRef = {
  id: t.Optional(Uuid('connection UUID')),
  customerId: t.Optional(CustomerRef()),
  projectId: t.Optional(ProjectRef()),
  name: t.Optional(ConnectionName()),
};

export const ConnectionOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    name: t.String({ description: 'unique within the project; route targets refer to it' }),
    provider: t.String({ description: 'adapter id' }),
    baseUrl: t.String({ description: 'empty: the provider default' }),
    hasApiKey: t.Boolean({ description: 'whether an API key is stored (the key itself is never returned)' }),
    options: t.Record(t.String(), t.Unknown()),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'Provider connection' },
);

export const ConnectionOps = {
  CreateProviderConnection: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateProviderConnection',
    summary: 'Create a provider connection (and enable its provider for the project)',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'provider_connection' },
    input: t.Object(
      {
        customerId: CustomerRef(),
        projectId: t.Optional(ProjectRef()),
        name: ConnectionName(),
        provider: t.String({ minLength: 1, maxLength: 63 }),
        baseUrl: BaseUrl(),
        apiKey: ApiKey(),
        options: Options(),
      },
      { additionalProperties: false },
    ),
    output: One('connection', ConnectionOut),
  }),
  GetProviderConnection: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetProviderConnection',
    summary: 'Get a provider connection (the API key is never returned)',
    permission: 'project_member',
    input: t.Object(ConnectionRef, { additionalProperties: false }),
    output: One('connection', ConnectionOut),
  }),
  ListProviderConnections: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListProviderConnections',
    summary: 'List the provider connections of a project',
    permission: 'project_member',
    input: t.Object(
      { customerId: CustomerRef(), projectId: t.Optional(ProjectRef()), pageSize: PageSize(), pageToken: PageToken() },
      { additionalProperties: false },
    ),
    output: Page('connections', ConnectionOut),
  }),
  UpdateProviderConnection: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProviderConnection',
    summary: 'Update a provider connection (unset fields stay unchanged; options replaces the whole object)',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'provider_connection' },
    input: t.Object({ ...ConnectionRef, baseUrl: BaseUrl(), apiKey: ApiKey(), options: Options() }, { additionalProperties: false }),
    output: One('connection', ConnectionOut),
  }),
  DeleteProviderConnection: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProviderConnection',
    summary: 'Delete a provider connection (soft delete); routes through it become not active',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'provider_connection' },
    input: t.Object(ConnectionRef, { additionalProperties: false }),
    output: Deleted(),
  }),
};

const C = ConnectionOps;
export const ConnectionResources = {
  connection: defineResource({
    owner: 'project',
    audit: 'provider_connection',
    stored: [{ table: 'provider_connections', removal: 'soft-delete' }],
    change: { kind: 'PROVIDER', entity: 'connection', keepsApiKeys: true },
    document: {
      section: 'connections',
      row: (secret) =>
        t.Object({
          id: t.String(),
          projectUuid: t.String(),
          customerId: t.String(),
          projectId: t.String(),
          name: t.String(),
          provider: t.String(),
          baseUrl: t.Union([t.String(), t.Null()]),
          /** The provider key (absent: null). */
          apiKey: t.Union([secret.text, t.Null()]),
          /** Provider options: sealed whole, as they may carry credentials (`headers`, secret-named options). */
          options: secret.json,
          /** The data plane may connect to private addresses for it (platform admin's save, or the operator's setting). */
          allowPrivate: t.Optional(t.Boolean()),
        }),
    },
    terraform: {
      type: 'gateway_provider_connection',
      description: 'A provider connection (credentials and settings of one upstream provider) in a project.',
      create: C.CreateProviderConnection,
      get: C.GetProviderConnection,
      update: C.UpdateProviderConnection,
      delete: C.DeleteProviderConnection,
      envelope: 'connection',
      key: [
        { api: 'customerId' },
        { api: 'projectId', forceNew: true, description: "project slug; unset means the customer's default project" },
        { api: 'name' },
      ],
      args: [
        { api: 'provider', tf: 'provider_name', update: true },
        { api: 'baseUrl', update: true },
        { api: 'options', update: true },
        {
          api: 'apiKey',
          update: true,
          optionalComputed: false,
          sensitive: true,
          keep: true,
          writeOnlyForm: true,
          description: 'the secret; kept in state as given, never read back (an out-of-band change is not detected)',
        },
      ],
      check: (r) => {
        const provider = reqText(r.provider);
        if (provider !== null) checkProviderName('provider', provider);
        checkConnectionSecrets({ provider, apiKey: reqText(r.apiKey), options: r.options });
      },
    },
  }),
};
