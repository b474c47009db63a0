import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { checkMcpAuth } from '../../api/mcp-rules.ts';
import { McpOps } from '../../api/ops/mcp.ts';
import { connectError } from '../../core/errors.ts';
import {
  customers,
  mcpProfiles,
  mcpServerCredentials,
  mcpServers,
  type McpServerRow,
  projectMcpServers,
  projects,
} from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader, Tx } from '../deps.ts';
import { uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { checkUpstreamUrls } from '../upstream-addresses.ts';

/**
 * The catalog of MCP servers (contract §7), the platform admin's. A server's credential
 * (`authValue`) is wrapped with the KEK at rest (`auth_value_wrapped`), never returned, audited or
 * logged: the API answers `hasAuthValue`, and only the data planes' document carries it (sealed for
 * a separate data plane). A catalog change is global, like the model catalog's.
 */

const { CreateMcpServer, GetMcpServer, ListMcpServers, UpdateMcpServer, DeleteMcpServer } = McpOps;

export const mcpServerView = (r: McpServerRow) => ({
  id: r.id,
  serverId: r.serverId,
  url: r.url,
  transport: r.transport,
  description: r.description ?? '',
  authType: r.authType,
  authHeader: r.authHeader ?? '',
  hasAuthValue: r.authValueWrapped !== null,
  labels: r.labels,
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

/** A live catalog server by serverId, or not_found naming `field`. */
export const findMcpServer = async (db: Reader, serverId: string, lock?: 'share' | 'update', field = 'serverId'): Promise<McpServerRow> => {
  const q = db
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.serverId, serverId), isNull(mcpServers.deletedAt)))
    .limit(1);
  const [row] = lock ? await q.for(lock) : await q;
  if (!row) throw connectError('not_found', `MCP server '${serverId}' is not in the catalog`, field);
  return row;
};

const checkUrl = (url: string): void => {
  if (!URL.canParse(url)) throw connectError('invalid_argument', "invalid field 'url': not a valid URL", 'url');
};

const change = (serverId: string) => ({ resource: 'mcpServer' as const, entityId: serverId });

/** The projects and profiles that use a server, as `customer/project` and `customer/project/profile` (at most 10 of each). */
const usersOf = async (tx: Tx, serverId: string): Promise<{ projects: string[]; profiles: string[] }> => {
  const live = tx
    .select({ id: projects.id })
    .from(projects)
    .innerJoin(customers, and(eq(customers.id, projects.customerUuid), isNull(customers.deletedAt)))
    .where(isNull(projects.deletedAt));
  const assigned = await tx
    .select({ customerId: projectMcpServers.customerId, projectId: projectMcpServers.projectId })
    .from(projectMcpServers)
    .where(and(eq(projectMcpServers.serverId, serverId), inArray(projectMcpServers.projectUuid, live)))
    .orderBy(projectMcpServers.customerId, projectMcpServers.projectId)
    .limit(10);
  const listed = await tx
    .select({ customerId: mcpProfiles.customerId, projectId: mcpProfiles.projectId, profileId: mcpProfiles.profileId })
    .from(mcpProfiles)
    .where(and(sql`${mcpProfiles.servers} @> ${JSON.stringify([{ serverId }])}::jsonb`, inArray(mcpProfiles.projectUuid, live)))
    .orderBy(mcpProfiles.customerId, mcpProfiles.projectId, mcpProfiles.profileId)
    .limit(10);
  return {
    projects: assigned.map((a) => `${a.customerId}/${a.projectId}`),
    profiles: listed.map((p) => `${p.customerId}/${p.projectId}/${p.profileId}`),
  };
};

export const mcpServerOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateMcpServer, {
    resourceId: (i) => rid(i.serverId),
    handler: async (input, { tx, change: record, principal }) => {
      checkUrl(input.url);
      const authType = input.authType ?? 'none';
      checkMcpAuth({ authType, authHeader: input.authHeader ?? null, hasValue: input.authValue != null, value: input.authValue });
      const allowPrivate = await checkUpstreamUrls(principal, deps.upstreamAllowPrivate === true, new Map([['url', input.url]]));
      const row = await uniquely(
        async () => {
          const [r] = await tx
            .insert(mcpServers)
            .values({
              serverId: input.serverId,
              url: input.url,
              transport: input.transport ?? 'streamable-http',
              description: input.description ?? null,
              authType,
              authHeader: input.authHeader ?? null,
              authValueWrapped: input.authValue != null ? deps.secrets.wrap(input.authValue) : null,
              allowPrivate,
              labels: input.labels ?? {},
            })
            .returning();
          return r as McpServerRow;
        },
        `MCP server '${input.serverId}' already exists`,
        'serverId',
      );
      await record(change(row.serverId));
      return { server: mcpServerView(row) };
    },
  }),
  op(GetMcpServer, {
    handler: async (input) => ({ server: mcpServerView(await findMcpServer(deps.db, input.serverId)) }),
  }),
  op(ListMcpServers, {
    handler: async (input) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(mcpServers.createdAt, mcpServers.id, input.pageToken);
      const rows = await deps.db
        .select()
        .from(mcpServers)
        .where(and(isNull(mcpServers.deletedAt), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { servers: p.items.map(mcpServerView), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, UpdateMcpServer, {
    resourceId: (i) => rid(i.serverId),
    handler: async (input, { tx, change: record, principal }) => {
      const current = await findMcpServer(tx, input.serverId, 'update');
      const authType = input.authType ?? current.authType;
      const valueGiven = input.authValue != null;
      // A header name given is checked as given; otherwise the stored one stays for 'header' and is dropped for the others.
      const authHeader = input.authHeader ?? (authType === 'header' ? current.authHeader : null);
      checkMcpAuth({
        authType,
        authHeader,
        hasValue: valueGiven || (authType !== 'none' && current.authValueWrapped !== null),
        value: input.authValue,
      });
      const patch: Partial<typeof mcpServers.$inferInsert> = { authType, authHeader, updatedAt: new Date() };
      if (input.url != null) {
        checkUrl(input.url);
        patch.url = input.url;
      }
      patch.allowPrivate = await checkUpstreamUrls(
        principal,
        deps.upstreamAllowPrivate === true,
        new Map([['url', input.url ?? current.url]]),
        {
          urls: new Map([['url', current.url]]),
          allowPrivate: current.allowPrivate,
        },
      );
      if (authType === 'none') patch.authValueWrapped = null;
      else if (input.authValue != null) patch.authValueWrapped = deps.secrets.wrap(input.authValue);
      if (input.transport != null) patch.transport = input.transport;
      if (input.description != null) patch.description = input.description;
      if (input.labels != null) patch.labels = input.labels;
      const [row] = await tx.update(mcpServers).set(patch).where(eq(mcpServers.id, current.id)).returning();
      await record(change(current.serverId));
      return { server: mcpServerView(row as McpServerRow) };
    },
  }),
  mutation(deps, DeleteMcpServer, {
    resourceId: (i) => rid(i.serverId),
    handler: async (input, { tx, change: record }) => {
      const current = await findMcpServer(tx, input.serverId, 'update');
      const users = await usersOf(tx, current.serverId);
      if (users.projects.length > 0 || users.profiles.length > 0) {
        const parts = [
          ...(users.projects.length > 0 ? [`assigned to ${users.projects.join(', ')}`] : []),
          ...(users.profiles.length > 0 ? [`listed by the profiles ${users.profiles.join(', ')}`] : []),
        ];
        throw connectError(
          'failed_precondition',
          `MCP server '${current.serverId}' is in use: ${parts.join('; ')} (remove those first)`,
          'serverId',
        );
      }
      const deletedAt = new Date();
      // Projects' and members' own credentials for it go with it (a server re-created under this id starts without them).
      await tx.delete(mcpServerCredentials).where(eq(mcpServerCredentials.serverUuid, current.id));
      await tx.update(mcpServers).set({ deletedAt }).where(eq(mcpServers.id, current.id));
      await record(change(current.serverId));
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
