import { and, eq, or } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { McpOps } from '../../api/ops/mcp.ts';
import { checkHeaderValue } from '../../api/header-values.ts';
import { connectError } from '../../core/errors.ts';
import {
  type McpServerCredentialRow,
  mcpServerCredentials,
  projectMcpServers,
  projectMembers,
  type ProjectRow,
} from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import { bodyScope, op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { findMcpServer } from './mcp-servers.ts';

/**
 * A project's or a member's own credential for a catalog MCP server (issue 24 item 3), as BYOK
 * keys are for providers: at a call the data plane sends the calling member's own credential (a
 * user token's user), else the project's, else the catalog's, in the catalog server's
 * authType/authHeader. The value is wrapped with the KEK at rest, never returned, audited or
 * logged; only the data planes' document carries it (sealed for a separate data plane).
 *
 * Who: the project's credential (userId '') — the project's admins or the platform admin; a
 * member's — that member themself or the platform admin. Listing shows the project's and the
 * caller's own (every one to the platform admin), as BYOK's List does.
 */

const { SetMcpServerCredential, DeleteMcpServerCredential, ListMcpServerCredentials } = McpOps;

const view = (r: McpServerCredentialRow) => ({
  id: r.id,
  customerId: r.customerId,
  projectId: r.projectId,
  serverId: r.serverId,
  userId: r.userId,
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

const isAdmin = (p: Principal): boolean => p.kind === 'platform_admin' || p.kind === 'system';

/** Whether `p` may write the credential of `userId` ('' = the project's) in `project`; permission_denied otherwise. */
const checkWriter = (p: Principal, project: ProjectRow, userId: string): void => {
  if (isAdmin(p)) return;
  if (p.kind !== 'user') throw connectError('permission_denied', 'no access to this resource');
  if (userId === '') {
    if (p.roles.get(project.projectId) !== 'admin')
      throw connectError(
        'permission_denied',
        `the project's credential requires the admin role in project '${project.projectId}'`,
        'userId',
      );
  } else if (p.userId !== userId || p.serviceAccountId !== undefined) {
    throw connectError('permission_denied', "a member's credential is set and deleted by that member (or the platform admin)", 'userId');
  }
};

const change = (project: ProjectRow, serverId: string, userId: string) => ({
  resource: 'mcpServerCredential' as const,
  entityId: rid(serverId, userId),
  customerId: project.customerId,
  projectId: project.projectId,
});

const isMember = async (tx: Tx, project: ProjectRow, userId: string): Promise<boolean> =>
  (
    await tx
      .select({ id: projectMembers.id })
      .from(projectMembers)
      .where(and(eq(projectMembers.projectUuid, project.id), eq(projectMembers.userId, userId)))
      .limit(1)
  ).length > 0;

export const mcpCredentialOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, SetMcpServerCredential, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.serverId, i.userId ?? ''),
    scope: bodyScope,
    handler: async (input, { tx, change: record, principal }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const userId = input.userId ?? '';
      checkWriter(principal, project, userId);
      const server = await findMcpServer(tx, input.serverId, 'share');
      if (server.authType === 'none')
        throw connectError(
          'failed_precondition',
          `MCP server '${server.serverId}' takes no credential (authType 'none'): the catalog entry must name where one goes first`,
          'serverId',
        );
      const [assigned] = await tx
        .select({ id: projectMcpServers.id })
        .from(projectMcpServers)
        .where(and(eq(projectMcpServers.projectUuid, project.id), eq(projectMcpServers.serverId, server.serverId)))
        .limit(1);
      if (!assigned)
        throw connectError(
          'failed_precondition',
          `MCP server '${server.serverId}' is not assigned to project '${project.projectId}' (AddProjectMcpServer first)`,
          'serverId',
        );
      if (userId !== '' && !(await isMember(tx, project, userId)))
        throw connectError('failed_precondition', `user '${userId}' is not a member of project '${project.projectId}'`, 'userId');
      const now = new Date();
      checkHeaderValue('authValue', input.authValue);
      const wrapped = deps.secrets.wrap(input.authValue);
      const [row] = await tx
        .insert(mcpServerCredentials)
        .values({
          projectUuid: project.id,
          customerId: project.customerId,
          projectId: project.projectId,
          serverUuid: server.id,
          serverId: server.serverId,
          userId,
          authValueWrapped: wrapped,
        })
        .onConflictDoUpdate({
          target: [mcpServerCredentials.projectUuid, mcpServerCredentials.serverUuid, mcpServerCredentials.userId],
          set: { authValueWrapped: wrapped, updatedAt: now },
        })
        .returning();
      await record(change(project, server.serverId, userId));
      return { credential: view(row as McpServerCredentialRow) };
    },
  }),
  mutation(deps, DeleteMcpServerCredential, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.serverId, i.userId ?? ''),
    scope: bodyScope,
    handler: async (input, { tx, change: record, principal }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const userId = input.userId ?? '';
      checkWriter(principal, project, userId);
      const gone = await tx
        .delete(mcpServerCredentials)
        .where(
          and(
            eq(mcpServerCredentials.projectUuid, project.id),
            eq(mcpServerCredentials.serverId, input.serverId),
            eq(mcpServerCredentials.userId, userId),
          ),
        )
        .returning({ id: mcpServerCredentials.id });
      const whose = userId === '' ? `project '${project.projectId}'` : `user '${userId}' in project '${project.projectId}'`;
      if (gone.length === 0) throw connectError('not_found', `no credential of ${whose} for MCP server '${input.serverId}'`, 'serverId');
      await record(change(project, input.serverId, userId));
      return { success: true };
    },
  }),
  op(ListMcpServerCredentials, {
    scope: bodyScope,
    handler: async (input, { principal }) => {
      // The page token is checked before anything is looked up (invalid_argument over not_found).
      const k = keyset(mcpServerCredentials.createdAt, mcpServerCredentials.id, input.pageToken);
      const size = pageSizeOf(input.pageSize);
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const own =
        principal.kind === 'user' ? or(eq(mcpServerCredentials.userId, ''), eq(mcpServerCredentials.userId, principal.userId)) : undefined;
      const rows = await deps.db
        .select()
        .from(mcpServerCredentials)
        .where(and(eq(mcpServerCredentials.projectUuid, project.id), own, k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { credentials: p.items.map(view), nextPageToken: p.nextPageToken };
    },
  }),
];
