import { and, eq } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { type ProjectMemberRow, projectMembers } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { CustomerRef, Enum, One, Page, PageSize, PageToken, ProjectKey, Str, Success, Timestamp, ts } from '../schemas.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Project members';

const Role = () => Enum(['admin', 'member'] as const, "project role: 'admin' manages the project, 'member' reads it");
const UserId = () => Str(1, 255, { description: 'user id from the identity provider (1-255)' });
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const scope = (i: { customerId: string; projectId: string }) => ({ customerId: i.customerId, projectId: i.projectId });

export const MemberOut = t.Object(
  {
    id: t.String(),
    customerId: t.String(),
    projectId: t.String(),
    userId: t.String(),
    role: t.String({ description: "'admin' or 'member'" }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'ProjectMember' },
);

const memberView = (m: ProjectMemberRow) => ({
  id: m.id,
  customerId: m.customerId,
  projectId: m.projectId,
  userId: m.userId,
  role: m.role,
  createdAt: ts(m.createdAt),
  updatedAt: ts(m.updatedAt),
});

const change = (customerId: string, projectId: string, userId: string) => ({ resource: 'projectMember' as const, entityId: userId, customerId, projectId });

export const memberOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'project_member',
    resourceId: (i) => rid(i.customerId, i.projectId, i.userId),
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectMember',
    summary: 'Add a user to a project with a role',
    notes: 'A user already in the project is already_exists (use UpdateProjectMember).',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, userId: UserId(), role: Role() }, { additionalProperties: false }),
    output: One('member', MemberOut),
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const row = await uniquely(
        async () => {
          const [m] = await tx
            .insert(projectMembers)
            .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, userId: input.userId, role: input.role })
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
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project_member',
    resourceId: (i) => rid(i.customerId, i.projectId, i.userId),
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProjectMember',
    summary: "Change a member's role",
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, userId: UserId(), role: Role() }, { additionalProperties: false }),
    output: One('member', MemberOut),
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
  mutation(deps, {
    action: 'DELETE',
    resource: 'project_member',
    resourceId: (i) => rid(i.customerId, i.projectId, i.userId),
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectMember',
    summary: 'Remove a user from a project',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, userId: UserId() }, { additionalProperties: false }),
    output: Success(),
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectMembers)
        .where(and(eq(projectMembers.projectUuid, project.id), eq(projectMembers.userId, input.userId)))
        .returning({ id: projectMembers.id });
      if (gone.length === 0) throw connectError('not_found', `user '${input.userId}' is not a member of project '${project.projectId}'`, 'userId');
      await record(change(project.customerId, project.projectId, input.userId));
      return { success: true };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectMembers',
    summary: "List a project's members — an addition: the seed does not show it",
    permission: 'project_member',
    scope,
    input: t.Object({ ...Addr, pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('members', MemberOut),
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
