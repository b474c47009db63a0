import { and, eq, inArray } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { checkMcpProfileServers, type McpProfileServerShape } from '../../api/mcp-rules.ts';
import { McpOps } from '../../api/ops/mcp.ts';
import { connectError } from '../../core/errors.ts';
import { mcpProfiles, type McpProfileRow, type McpProfileServerRow, projectMcpServers, type ProjectRow } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { approvePins, dropUnpinned, pendingTools } from './mcp-pins.ts';

/**
 * MCP profiles (contract §7): a project's endpoints `/mcp/{profileId}`, each fronting some of the
 * project's assigned MCP servers with a tool filter and a name prefix per server.
 *
 * A profile may only list servers assigned to its project when it is saved. Removing an assignment
 * later leaves the profiles' entries stored: the data planes' document lists a profile's servers
 * only while they are assigned (and in the catalog), so the server drops out of every profile of
 * the project within the propagation time, and comes back if it is assigned again.
 */

const { CreateMcpProfile, GetMcpProfile, ListMcpProfiles, UpdateMcpProfile, DeleteMcpProfile, ApproveMcpTools } = McpOps;
const scope = (i: { customerId?: unknown; projectId?: unknown }) => ({ customerId: i.customerId, projectId: i.projectId });
const idOf = (i: { customerId?: unknown; projectId?: unknown; profileId?: unknown }) => rid(i.customerId, i.projectId, i.profileId);

const view = (r: McpProfileRow) => ({
  id: r.id,
  customerId: r.customerId,
  projectId: r.projectId,
  profileId: r.profileId,
  description: r.description ?? '',
  servers: r.servers.map((s) => ({
    serverId: s.serverId,
    ...(s.tools ? { tools: s.tools } : {}),
    prefix: s.prefix,
    ...(s.pin ? { pin: true } : {}),
  })),
  ...(r.grants ? { grants: r.grants.map((g) => ({ principal: g.principal, tools: [...g.tools] })) } : {}),
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

const change = (project: ProjectRow, profileId: string) => ({
  resource: 'mcpProfile' as const,
  entityId: profileId,
  customerId: project.customerId,
  projectId: project.projectId,
});

/** The profile's servers checked (see checkMcpProfileServers) and each assigned to the project (failed_precondition naming the entry). */
const serversFor = async (tx: Tx, project: ProjectRow, given: readonly McpProfileServerShape[]): Promise<McpProfileServerRow[]> => {
  const servers = checkMcpProfileServers(given);
  const assigned = await tx
    .select({ serverId: projectMcpServers.serverId })
    .from(projectMcpServers)
    .where(
      and(
        eq(projectMcpServers.projectUuid, project.id),
        inArray(
          projectMcpServers.serverId,
          servers.map((s) => s.serverId),
        ),
      ),
    );
  const ok = new Set(assigned.map((a) => a.serverId));
  const i = servers.findIndex((s) => !ok.has(s.serverId));
  if (i >= 0)
    throw connectError(
      'failed_precondition',
      `field 'servers.${i}.serverId': MCP server '${servers[i]?.serverId}' is not assigned to project '${project.projectId}' (AddProjectMcpServer first)`,
      `servers.${i}.serverId`,
    );
  return servers;
};

const lockProfile = async (tx: Tx, project: ProjectRow, profileId: string): Promise<McpProfileRow> => {
  const [row] = await tx
    .select()
    .from(mcpProfiles)
    .where(and(eq(mcpProfiles.projectUuid, project.id), eq(mcpProfiles.profileId, profileId)))
    .for('update');
  if (!row) throw connectError('not_found', `MCP profile '${profileId}' not found in project '${project.projectId}'`, 'profileId');
  return row;
};

export const mcpProfileOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateMcpProfile, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const servers = await serversFor(tx, project, input.servers);
      const now = new Date();
      const row = await uniquely(
        async () => {
          const [r] = await tx
            .insert(mcpProfiles)
            .values({
              projectUuid: project.id,
              customerId: project.customerId,
              projectId: project.projectId,
              profileId: input.profileId,
              description: input.description ?? null,
              servers,
              grants: input.grants ? input.grants.map((g) => ({ principal: g.principal, tools: [...g.tools] })) : null,
              createdAt: now,
              updatedAt: now,
            })
            .returning();
          return r as McpProfileRow;
        },
        `MCP profile '${input.profileId}' already exists in project '${project.projectId}'`,
        'profileId',
      );
      await record(change(project, row.profileId));
      return { profile: view(row) };
    },
  }),
  op(GetMcpProfile, {
    scope,
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const [row] = await deps.db
        .select()
        .from(mcpProfiles)
        .where(and(eq(mcpProfiles.projectUuid, project.id), eq(mcpProfiles.profileId, input.profileId)))
        .limit(1);
      if (!row)
        throw connectError('not_found', `MCP profile '${input.profileId}' not found in project '${project.projectId}'`, 'profileId');
      const pending = await pendingTools(deps.db, row);
      return { profile: { ...view(row), ...(pending.length > 0 ? { pendingTools: pending } : {}) } };
    },
  }),
  op(ListMcpProfiles, {
    scope,
    handler: async (input) => {
      const k = keyset(mcpProfiles.createdAt, mcpProfiles.id, input.pageToken);
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const size = pageSizeOf(input.pageSize);
      const rows = await deps.db
        .select()
        .from(mcpProfiles)
        .where(and(eq(mcpProfiles.projectUuid, project.id), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      // Pending tools of pinned servers, as GetMcpProfile shows them (one indexed read per profile that pins).
      const profiles = await Promise.all(
        p.items.map(async (row) => {
          const pending = await pendingTools(deps.db, row);
          return { ...view(row), ...(pending.length > 0 ? { pendingTools: pending } : {}) };
        }),
      );
      return { profiles, nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, UpdateMcpProfile, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const current = await lockProfile(tx, project, input.profileId);
      const patch: Partial<typeof mcpProfiles.$inferInsert> = { updatedAt: new Date() };
      if (input.servers) patch.servers = await serversFor(tx, project, input.servers);
      if (input.description != null) patch.description = input.description;
      if (input.grants) patch.grants = input.grants.map((g) => ({ principal: g.principal, tools: [...g.tools] }));
      const [row] = await tx.update(mcpProfiles).set(patch).where(eq(mcpProfiles.id, current.id)).returning();
      await dropUnpinned(tx, row as McpProfileRow);
      await record(change(project, current.profileId));
      return { profile: view(row as McpProfileRow) };
    },
  }),
  mutation(deps, ApproveMcpTools, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const current = await lockProfile(tx, project, input.profileId);
      const pinned = current.servers.filter((s) => s.pin).map((s) => s.serverId);
      if (input.serverId !== undefined && !pinned.includes(input.serverId))
        throw connectError(
          'failed_precondition',
          `MCP server '${input.serverId}' is not a pinned server (pin: true) of profile '${current.profileId}'`,
          'serverId',
        );
      if (pinned.length === 0)
        throw connectError(
          'failed_precondition',
          `MCP profile '${current.profileId}' pins no server (pin: true on a server first)`,
          'profileId',
        );
      await approvePins(tx, current, input.serverId !== undefined ? [input.serverId] : pinned);
      await record(change(project, current.profileId));
      const pending = await pendingTools(tx, current);
      return { profile: { ...view(current), ...(pending.length > 0 ? { pendingTools: pending } : {}) } };
    },
  }),
  mutation(deps, DeleteMcpProfile, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const current = await lockProfile(tx, project, input.profileId);
      await tx.delete(mcpProfiles).where(eq(mcpProfiles.id, current.id));
      await record(change(project, current.profileId));
      return { success: true };
    },
  }),
];
