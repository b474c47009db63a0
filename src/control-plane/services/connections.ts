import { and, eq, isNull, type SQL } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { getAdapter } from '../../providers/registry.ts';
import { type ProviderConnectionRow, providerConnections } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, recordChange } from '../deps.ts';
import { findProject, inLiveProject, lockProject, uniquely } from '../lookups.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { CustomerRef, Deleted, One, PATTERNS, Page, PageSize, PageToken, ProjectRef, Timestamp, Uuid, projectOrDefault, ts } from '../schemas.ts';
import { checkConnectionUrls, connectionUrls } from '../upstream-addresses.ts';
import { enableProvider } from './assignments.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Provider connections';

const ConnectionName = () => t.String({ minLength: 1, maxLength: 253, pattern: PATTERNS.ID, description: 'connection name (ID pattern), unique within the project' });
const BaseUrl = () => t.Optional(t.Union([t.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' }), t.Null()], { description: 'overrides the public default' }));
const ApiKey = () => t.Optional(t.Union([t.String({ minLength: 1, maxLength: 16384 }), t.Null()], { description: 'secret; wrapped at rest, never returned' }));
const Options = () => t.Optional(t.Record(t.String(), t.Unknown(), { description: 'provider options (Struct): region, apiVersion, deployments, headers, …' }));

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

/** The API never returns the key: only whether one is set. */
export const connectionView = (c: ProviderConnectionRow) => ({
  id: c.id,
  customerId: c.customerId,
  projectId: c.projectId,
  name: c.name,
  provider: c.provider,
  baseUrl: c.baseUrl ?? '',
  hasApiKey: c.apiKeyWrapped !== null,
  options: c.options as Record<string, unknown>,
  createdAt: ts(c.createdAt),
  updatedAt: ts(c.updatedAt),
});

const refScope = (i: { customerId?: string; projectId?: string }) =>
  i.customerId === undefined ? undefined : { customerId: i.customerId, projectId: projectOrDefault(i.projectId) };

export const findConnection = async (deps: ControlDeps, ref: { id?: string; customerId?: string; projectId?: string; name?: string }): Promise<ProviderConnectionRow> => {
  let where: SQL | undefined;
  if (ref.id) where = eq(providerConnections.id, ref.id);
  else if (ref.customerId && ref.name)
    where = and(
      eq(providerConnections.customerId, ref.customerId),
      eq(providerConnections.projectId, projectOrDefault(ref.projectId)),
      eq(providerConnections.name, ref.name),
    );
  else throw connectError('invalid_argument', "give 'id', or 'customerId', 'projectId' and 'name'", 'id');
  const [row] = await deps.db
    .select()
    .from(providerConnections)
    .where(and(where, isNull(providerConnections.deletedAt)))
    .limit(1);
  // Addressed by id within a named customer (a project-scoped caller): the row must be in that project.
  if (!row || (ref.id && ref.customerId && (row.customerId !== ref.customerId || row.projectId !== projectOrDefault(ref.projectId))))
    throw connectError('not_found', 'provider connection not found', ref.id ? 'id' : 'name');
  return row;
};

const checkProvider = (provider: string): void => {
  if (!getAdapter(provider)) throw connectError('invalid_argument', `invalid field 'provider': unknown provider '${provider}'`, 'provider');
};

export const connectionOps = (deps: ControlDeps): OpDef[] => [
  op({
    service: ADMIN,
    group: GROUP,
    name: 'CreateProviderConnection',
    summary: 'Create a provider connection (and enable its provider for the project)',
    permission: 'project_admin',
    scope: (i) => ({ customerId: i.customerId, projectId: projectOrDefault(i.projectId) }),
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
    handler: async (input, ctx) => {
      await findProject(deps.db, input.customerId, input.projectId);
      checkProvider(input.provider);
      const allowPrivate = await checkConnectionUrls(ctx.principal, deps.upstreamAllowPrivate === true, input);
      const row = await uniquely(
        () =>
          deps.db.transaction(async (tx) => {
            const project = await lockProject(tx, input.customerId, input.projectId);
            const [c] = await tx
              .insert(providerConnections)
              .values({
                projectUuid: project.id,
                customerId: project.customerId,
                projectId: project.projectId,
                name: input.name,
                provider: input.provider,
                baseUrl: input.baseUrl ?? null,
                apiKeyWrapped: input.apiKey ? deps.secrets.wrap(input.apiKey) : null,
                options: input.options ?? {},
                allowPrivate,
              })
              .returning();
            const created = c as ProviderConnectionRow;
            await enableProvider(tx, project, input.provider);
            await recordChange(tx, { kind: 'PROVIDER', entity: 'connection', entityId: created.id, customerId: project.customerId, projectId: project.projectId });
            return created;
          }),
        `provider connection '${input.name}' already exists in project '${projectOrDefault(input.projectId)}'`,
        'name',
      );
      await deps.changed();
      return { connection: connectionView(row) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetProviderConnection',
    summary: 'Get a provider connection (the API key is never returned)',
    permission: 'project_member',
    scope: refScope,
    input: t.Object(ConnectionRef, { additionalProperties: false }),
    output: One('connection', ConnectionOut),
    handler: async (input) => ({ connection: connectionView(await findConnection(deps, input)) }),
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListProviderConnections',
    summary: 'List the provider connections of a project',
    permission: 'project_member',
    scope: (i) => ({ customerId: i.customerId, projectId: projectOrDefault(i.projectId) }),
    input: t.Object({ customerId: CustomerRef(), projectId: t.Optional(ProjectRef()), pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('connections', ConnectionOut),
    handler: async (input) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(providerConnections.createdAt, providerConnections.id, input.pageToken);
      const rows = await deps.db
        .select()
        .from(providerConnections)
        .where(
          and(
            inLiveProject(deps.db, providerConnections.projectUuid, input.customerId, input.projectId),
            isNull(providerConnections.deletedAt),
            k.where,
          ),
        )
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { connections: p.items.map(connectionView), nextPageToken: p.nextPageToken };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProviderConnection',
    summary: 'Update a provider connection (unset fields stay unchanged; options replaces the whole object)',
    permission: 'project_admin',
    scope: refScope,
    input: t.Object({ ...ConnectionRef, baseUrl: BaseUrl(), apiKey: ApiKey(), options: Options() }, { additionalProperties: false }),
    output: One('connection', ConnectionOut),
    handler: async (input, ctx) => {
      const current = await findConnection(deps, input);
      const patch: Partial<typeof providerConnections.$inferInsert> = { updatedAt: new Date() };
      const currentKey = current.apiKeyWrapped ? deps.secrets.unwrap(current.apiKeyWrapped) : null;
      patch.allowPrivate = await checkConnectionUrls(
        ctx.principal,
        deps.upstreamAllowPrivate === true,
        { baseUrl: input.baseUrl ?? current.baseUrl, apiKey: input.apiKey ?? currentKey, options: input.options ?? current.options },
        { urls: connectionUrls({ baseUrl: current.baseUrl, apiKey: currentKey, options: current.options }), allowPrivate: current.allowPrivate },
      );
      if (input.baseUrl != null) patch.baseUrl = input.baseUrl;
      if (input.apiKey != null) patch.apiKeyWrapped = deps.secrets.wrap(input.apiKey);
      if (input.options != null) patch.options = input.options;
      const row = await deps.db.transaction(async (tx) => {
        const [c] = await tx.update(providerConnections).set(patch).where(eq(providerConnections.id, current.id)).returning();
        await recordChange(tx, { kind: 'PROVIDER', entity: 'connection', entityId: current.id, customerId: current.customerId, projectId: current.projectId });
        return c as ProviderConnectionRow;
      });
      await deps.changed();
      return { connection: connectionView(row) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProviderConnection',
    summary: 'Delete a provider connection (soft delete); routes through it become not active',
    permission: 'project_admin',
    scope: refScope,
    input: t.Object(ConnectionRef, { additionalProperties: false }),
    output: Deleted(),
    handler: async (input) => {
      const current = await findConnection(deps, input);
      const deletedAt = new Date();
      await deps.db.transaction(async (tx) => {
        await tx.update(providerConnections).set({ deletedAt }).where(eq(providerConnections.id, current.id));
        await recordChange(tx, { kind: 'PROVIDER', entity: 'connection', entityId: current.id, customerId: current.customerId, projectId: current.projectId });
      });
      await deps.changed();
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
