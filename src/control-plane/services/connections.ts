import { and, eq, isNull, type SQL } from 'drizzle-orm';
import { checkConnectionSecrets, ConnectionOps } from '../../api/ops/connections.ts';
import { projectOrDefault, ts } from '../../api/kit.ts';
import { connectError } from '../../core/errors.ts';
import { checkProviderName } from '../../api/providers.ts';
import { type ProviderConnectionRow, providerConnections } from '../../store/schema/index.ts';
import { bodyScope, namedScope, op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader, Tx } from '../deps.ts';
import { inLiveProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { checkConnectionUrls, connectionUrls } from '../upstream-addresses.ts';
import { enableProvider } from './assignments.ts';

const { CreateProviderConnection, GetProviderConnection, ListProviderConnections, UpdateProviderConnection, DeleteProviderConnection } =
  ConnectionOps;

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

type ConnectionAddr = { id?: string; customerId?: string; projectId?: string; name?: string };

export const findConnection = async (db: Reader, ref: ConnectionAddr, lock?: 'update'): Promise<ProviderConnectionRow> => {
  let where: SQL | undefined;
  if (ref.id) where = eq(providerConnections.id, ref.id);
  else if (ref.customerId && ref.name)
    where = and(
      eq(providerConnections.customerId, ref.customerId),
      eq(providerConnections.projectId, projectOrDefault(ref.projectId)),
      eq(providerConnections.name, ref.name),
    );
  else throw connectError('invalid_argument', "give 'id', or 'customerId', 'projectId' and 'name'", 'id');
  const q = db
    .select()
    .from(providerConnections)
    .where(and(where, isNull(providerConnections.deletedAt)))
    .limit(1);
  const [row] = lock ? await q.for(lock) : await q;
  // Addressed by id within a named customer (a project-scoped caller): the row must be in that project.
  if (!row || (ref.id && ref.customerId && (row.customerId !== ref.customerId || row.projectId !== projectOrDefault(ref.projectId))))
    throw connectError('not_found', 'provider connection not found', ref.id ? 'id' : 'name');
  return row;
};

/** The connection, locked for a change after its live project (parents first, as every path locks). */
const lockConnection = async (tx: Tx, ref: ConnectionAddr): Promise<ProviderConnectionRow> => {
  const found = await findConnection(tx, ref);
  await lockProject(tx, found.customerId, found.projectId);
  return findConnection(tx, { id: found.id }, 'update');
};

const checkProvider = (provider: string): void => checkProviderName('provider', provider);

export const connectionOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateProviderConnection, {
    resourceId: (_i, o) => o?.connection.id ?? '',
    scope: bodyScope,
    handler: async (input, { tx, change, principal }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      checkProvider(input.provider);
      checkConnectionSecrets({ provider: input.provider, apiKey: input.apiKey, options: input.options });
      const allowPrivate = await checkConnectionUrls(principal, deps.upstreamAllowPrivate === true, input);
      const row = await uniquely(
        async () => {
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
          return c as ProviderConnectionRow;
        },
        `provider connection '${input.name}' already exists in project '${projectOrDefault(input.projectId)}'`,
        'name',
      );
      await enableProvider(tx, project, input.provider);
      await change({ resource: 'connection' as const, entityId: row.id, customerId: project.customerId, projectId: project.projectId });
      return { connection: connectionView(row) };
    },
  }),
  op(GetProviderConnection, {
    scope: namedScope,
    handler: async (input) => ({ connection: connectionView(await findConnection(deps.db, input)) }),
  }),
  op(ListProviderConnections, {
    scope: bodyScope,
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
  mutation(deps, UpdateProviderConnection, {
    resourceId: (i, o) => o?.connection.id ?? rid(i.id),
    scope: namedScope,
    handler: async (input, { tx, change, principal }) => {
      const current = await lockConnection(tx, input);
      checkConnectionSecrets({ provider: current.provider, apiKey: input.apiKey, options: input.options });
      const patch: Partial<typeof providerConnections.$inferInsert> = { updatedAt: new Date() };
      const currentKey = current.apiKeyWrapped ? deps.secrets.unwrap(current.apiKeyWrapped) : null;
      patch.allowPrivate = await checkConnectionUrls(
        principal,
        deps.upstreamAllowPrivate === true,
        { baseUrl: input.baseUrl ?? current.baseUrl, apiKey: input.apiKey ?? currentKey, options: input.options ?? current.options },
        {
          urls: connectionUrls({ baseUrl: current.baseUrl, apiKey: currentKey, options: current.options }),
          allowPrivate: current.allowPrivate,
        },
      );
      if (input.baseUrl != null) patch.baseUrl = input.baseUrl;
      if (input.apiKey != null) patch.apiKeyWrapped = deps.secrets.wrap(input.apiKey);
      if (input.options != null) patch.options = input.options;
      const [row] = await tx.update(providerConnections).set(patch).where(eq(providerConnections.id, current.id)).returning();
      await change({ resource: 'connection' as const, entityId: current.id, customerId: current.customerId, projectId: current.projectId });
      return { connection: connectionView(row as ProviderConnectionRow) };
    },
  }),
  mutation(deps, DeleteProviderConnection, {
    resourceId: (i) => rid(i.id),
    scope: namedScope,
    handler: async (input, { tx, change }) => {
      const current = await lockConnection(tx, input);
      const deletedAt = new Date();
      await tx.update(providerConnections).set({ deletedAt }).where(eq(providerConnections.id, current.id));
      await change({ resource: 'connection' as const, entityId: current.id, customerId: current.customerId, projectId: current.projectId });
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
