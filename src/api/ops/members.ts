import { Type as t } from '@sinclair/typebox';
import { CustomerRef, Enum, One, Page, PageSize, PageToken, ProjectKey, Str, Success, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/** Project members: users of the identity provider with a role ('admin' or 'member') in a project. */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Project members';

export const PROJECT_ROLES = ['admin', 'member'] as const;
const Role = () => Enum(PROJECT_ROLES, "project role: 'admin' manages the project, 'member' reads it");
const UserId = () => Str(1, 255, { description: 'user id from the identity provider (1-255)' });
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };

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

export const MemberOps = {
  AddProjectMember: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectMember',
    summary: 'Add a user to a project with a role',
    notes: 'A user already in the project is already_exists (use UpdateProjectMember).',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'project_member' },
    input: t.Object({ ...Addr, userId: UserId(), role: Role() }, { additionalProperties: false }),
    output: One('member', MemberOut),
  }),
  UpdateProjectMember: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProjectMember',
    summary: "Change a member's role",
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'project_member' },
    input: t.Object({ ...Addr, userId: UserId(), role: Role() }, { additionalProperties: false }),
    output: One('member', MemberOut),
  }),
  RemoveProjectMember: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectMember',
    summary: 'Remove a user from a project',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'project_member' },
    input: t.Object({ ...Addr, userId: UserId() }, { additionalProperties: false }),
    output: Success(),
  }),
  ListProjectMembers: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectMembers',
    summary: "List a project's members",
    permission: 'project_member',
    input: t.Object({ ...Addr, pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('members', MemberOut),
  }),
};

const M = MemberOps;
export const MemberResources = {
  projectMember: defineResource({
    owner: 'project',
    audit: 'project_member',
    stored: [{ table: 'project_members', removal: 'delete' }],
    change: { kind: 'PROJECT_MEMBER', entity: 'project_member', keepsApiKeys: true },
    /** Project members (user ids) by project row: user tokens for a project need a current membership. */
    document: { section: 'projectMembers', row: () => t.Object({ projectUuid: t.String(), userId: t.String() }) },
    terraform: {
      type: 'gateway_project_member',
      description: "A user's role in a project.",
      create: M.AddProjectMember,
      update: M.UpdateProjectMember,
      delete: M.RemoveProjectMember,
      envelope: 'member',
      list: { op: M.ListProjectMembers, field: 'members' },
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'userId' }],
      args: [{ api: 'role', update: true }],
    },
  }),
};
