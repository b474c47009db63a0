import { Type as t } from '@sinclair/typebox';
import {
  CustomerRef,
  Deleted,
  Description,
  Labels,
  LabelsOut,
  Name,
  One,
  OptTimestamp,
  Page,
  PageSize,
  PageToken,
  ProjectKey,
  ProjectSlug,
  Timestamp,
} from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/** Projects of a customer: what routes, keys, members, assignments and settings belong to. */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Projects';
const ProjectAddr = { customerId: CustomerRef(), projectId: ProjectKey() };

export const ProjectOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    projectId: t.String({ description: "slug, unique within the customer; 'default' is the default project" }),
    name: t.String(),
    description: t.String(),
    labels: LabelsOut(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    deletedAt: OptTimestamp('set once soft-deleted (never returned by Get/List)'),
  },
  { description: 'Project' },
);

export const ProjectOps = {
  CreateProject: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateProject',
    summary: 'Create a project in a customer',
    notes:
      'projectId is unique among the active projects of the customer; a slug of a deleted project may be reused (the new project starts empty).',
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'project' },
    input: t.Object(
      { customerId: CustomerRef(), projectId: ProjectSlug(), description: Description(), labels: Labels(), name: Name() },
      { additionalProperties: false },
    ),
    output: One('project', ProjectOut),
  }),
  GetProject: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetProject',
    summary: 'Get a project',
    permission: 'project_member',
    input: t.Object(ProjectAddr, { additionalProperties: false }),
    output: One('project', ProjectOut),
  }),
  ListProjects: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjects',
    summary: "List a customer's active projects (oldest first)",
    notes: 'A user token sees only the projects it has a role in. Keyset paging as ListCustomers.',
    permission: 'customer_member',
    input: t.Object({ customerId: CustomerRef(), pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('projects', ProjectOut),
  }),
  UpdateProject: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProject',
    summary: 'Update a project (unset or null fields stay unchanged; labels replaces the set)',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'project' },
    input: t.Object({ ...ProjectAddr, description: Description(), labels: Labels(), name: Name() }, { additionalProperties: false }),
    output: One('project', ProjectOut),
  }),
  DeleteProject: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProject',
    summary: 'Delete a project (soft delete, cascading)',
    notes:
      "Soft-deletes the project, its routes and provider connections; revokes its API keys (they stop working once the change is served); removes its members, assignments, settings and gateway attachments. The 'default' project cannot be deleted (failed_precondition); it goes with its customer.",
    permission: 'platform_admin',
    mutates: { action: 'DELETE', resource: 'project' },
    input: t.Object(ProjectAddr, { additionalProperties: false }),
    output: Deleted(),
  }),
};

const P = ProjectOps;
export const ProjectResources = {
  project: defineResource({
    owner: 'customer',
    audit: 'project',
    stored: [{ table: 'projects', removal: 'soft-delete', touch: true }],
    change: { kind: 'PROJECT', entity: 'project', keepsApiKeys: false },
    terraform: {
      type: 'gateway_project',
      description: 'A project of a customer.',
      create: P.CreateProject,
      get: P.GetProject,
      update: P.UpdateProject,
      delete: P.DeleteProject,
      envelope: 'project',
      key: [{ api: 'customerId' }, { api: 'projectId' }],
      args: [
        { api: 'name', update: true },
        { api: 'description', update: true },
        { api: 'labels', update: true },
      ],
    },
  }),
};
