import { and, eq } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { MemberOps } from '../../api/ops/members.ts';
import { connectError } from '../../core/errors.ts';
import { type ProjectMemberRow, projectMembers } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

const { AddProjectMember, UpdateProjectMember, RemoveProjectMember, ListProjectMembers } = MemberOps;
const scope = (i: { customerId?: unknown; projectId?: unknown }) => ({ customerId: i.customerId, projectId: i.projectId });
const idOf = (i: { customerId?: unknown; projectId?: unknown; userId?: unknown }) => rid(i.customerId, i.projectId, i.userId);

const memberView = (m: ProjectMemberRow) => ({
  id: m.id,
  customerId: m.customerId,
  projectId: m.projectId,
  userId: m.userId,
  role: m.role,
  createdAt: ts(m.createdAt),
  updatedAt: ts(m.updatedAt),
});

const change = (customerId: string, projectId: string, userId: string) => ({
  resource: 'projectMember' as const,
  entityId: userId,
  customerId,
  projectId,
});

export const memberOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, AddProjectMember, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const row = await uniquely(
        async () => {
          const [m] = await tx
            .insert(projectMembers)
            .values({
              projectUuid: project.id,
              customerId: project.customerId,
              projectId: project.projectId,
              userId: input.userId,
              role: input.role,
            })
            .returning();
          return m as ProjectMemberRow;
        },
        `user '${input.userId}' is already a member of project '${input.projectId}'`,
        'userId',
      );
      await record(change(project.customerId, project.projectId, input.userId));
      return { member: memberView(row) };
    },
  }),
  mutation(deps, UpdateProjectMember, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const [row] = await tx
        .update(projectMembers)
        .set({ role: input.role, updatedAt: new Date() })
        .where(and(eq(projectMembers.projectUuid, project.id), eq(projectMembers.userId, input.userId)))
        .returning();
      if (!row) throw connectError('not_found', `user '${input.userId}' is not a member of project '${project.projectId}'`, 'userId');
      await record(change(project.customerId, project.projectId, input.userId));
      return { member: memberView(row) };
    },
  }),
  mutation(deps, RemoveProjectMember, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectMembers)
        .where(and(eq(projectMembers.projectUuid, project.id), eq(projectMembers.userId, input.userId)))
        .returning({ id: projectMembers.id });
      if (gone.length === 0)
        throw connectError('not_found', `user '${input.userId}' is not a member of project '${project.projectId}'`, 'userId');
      await record(change(project.customerId, project.projectId, input.userId));
      return { success: true };
    },
  }),
  op(ListProjectMembers, {
    scope,
    handler: async (input) => {
      const k = keyset(projectMembers.createdAt, projectMembers.id, input.pageToken);
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const size = pageSizeOf(input.pageSize);
      const rows = await deps.db
        .select()
        .from(projectMembers)
        .where(and(eq(projectMembers.projectUuid, project.id), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { members: p.items.map(memberView), nextPageToken: p.nextPageToken };
    },
  }),
];
