import { Type as t } from '@sinclair/typebox';
import {
  CustomerSlug,
  Deleted,
  Description,
  Labels,
  LabelsOut,
  Name,
  Nullable,
  OptTimestamp,
  PATTERNS,
  Page,
  PageSize,
  PageToken,
  Str,
  Success,
  Timestamp,
  Url,
  Uuid,
  Warnings,
} from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/**
 * Project gateways (contract §3.2): a customer-facing endpoint hosted on a workspace (data
 * plane) that serves the projects attached to it, under a URL whose host is bound to it alone.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Project gateways';

const Slug = (what: string) => Str(1, 253, { pattern: PATTERNS.ID, description: `${what} (ID, 1-253)` });
const OwnerProject = () =>
  t.Optional(
    Str(0, 253, {
      pattern: `^$|${PATTERNS.ID}`,
      description:
        'owner scope (ID, max 253): a project owner names the project it owns, which the gateway must serve; ignored for platform admins',
    }),
  );
const ById = { id: Uuid('project gateway UUID (internal id)') };

export const ProjectGatewayOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    workspaceId: t.String({ description: 'slug of the hosting data plane (workspace)' }),
    projectGatewayId: t.String({ description: 'slug, unique within the workspace' }),
    name: t.String(),
    description: t.String(),
    labels: LabelsOut(),
    url: t.String({ description: 'customer-facing URL or hostname; empty until set' }),
    projectIds: t.Array(t.String(), { description: 'attached projects, in attachment order' }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    deletedAt: OptTimestamp('set once soft-deleted (never returned by Get/List)'),
  },
  { description: 'ProjectGateway' },
);
const WithWarnings = t.Object({ projectGateway: ProjectGatewayOut, warnings: Warnings() });
const OneGateway = t.Object({ projectGateway: ProjectGatewayOut });

export const ProjectGatewayOps = {
  CreateProjectGateway: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateProjectGateway',
    summary: 'Create a project gateway hosted on a workspace',
    notes:
      'The workspace must exist for the customer (not_found); projectGatewayId is unique within it (already_exists). A url given must have a host no other gateway is bound to (already_exists).',
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'project_gateway' },
    input: t.Object(
      {
        customerId: CustomerSlug(),
        workspaceId: Slug('hosting workspace slug; must exist'),
        projectGatewayId: Slug('gateway slug, unique within the workspace'),
        description: Description(),
        labels: Labels(),
        name: Name(),
        url: Nullable(Url(0, 'customer-facing URL or hostname (max 2048)')),
      },
      { additionalProperties: false },
    ),
    output: OneGateway,
  }),
  GetProjectGateway: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetProjectGateway',
    summary: 'Get a project gateway by its internal id',
    permission: 'project_member',
    input: t.Object({ ...ById, projectId: OwnerProject() }, { additionalProperties: false }),
    output: OneGateway,
  }),
  ListProjectGateways: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectGateways',
    summary: 'List active project gateways (oldest first)',
    notes:
      'Filters: customerId, workspaceId, projectId (gateways serving it). A user token must name its customer and sees the gateways serving its projects.',
    permission: 'customer_member',
    input: t.Object(
      {
        customerId: t.Optional(
          Str(0, 63, { pattern: `^$|${PATTERNS.SLUG}`, description: 'customer slug; empty or unset: all (platform admins only)' }),
        ),
        workspaceId: t.Optional(Str(0, 253, { pattern: `^$|${PATTERNS.ID}`, description: 'only gateways hosted on this workspace' })),
        projectId: t.Optional(Str(0, 253, { pattern: `^$|${PATTERNS.ID}`, description: 'only gateways serving this project' })),
        pageSize: PageSize(),
        pageToken: PageToken(),
      },
      { additionalProperties: false },
    ),
    output: Page('projectGateways', ProjectGatewayOut),
  }),
  UpdateProjectGateway: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProjectGateway',
    summary: 'Update name, description, labels, url (unset or null fields stay unchanged; labels replaces the set; url "" clears it)',
    notes: 'A url whose host is bound to another gateway is already_exists.',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'project_gateway' },
    input: t.Object(
      {
        ...ById,
        projectId: OwnerProject(),
        description: Description(),
        labels: Labels(),
        name: Name(),
        url: Nullable(Url(0, 'customer-facing URL or hostname (max 2048); empty clears it')),
      },
      { additionalProperties: false },
    ),
    output: OneGateway,
  }),
  DeleteProjectGateway: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProjectGateway',
    summary: 'Delete a project gateway (soft delete; its attachments are removed and its URL host freed)',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'project_gateway' },
    input: t.Object({ ...ById, projectId: OwnerProject() }, { additionalProperties: false }),
    output: Deleted(),
  }),
  AttachProjectGatewayProject: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'AttachProjectGatewayProject',
    summary: 'Attach a project to a gateway (idempotent)',
    notes:
      "The project must exist in the gateway's customer. Warns when the project has no assigned models (the gateway then serves an empty route map and answers 404).",
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'project_gateway' },
    input: t.Object({ ...ById, projectId: Slug('project to attach') }, { additionalProperties: false }),
    output: WithWarnings,
  }),
  DetachProjectGatewayProject: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DetachProjectGatewayProject',
    summary: 'Detach a project from a gateway (not attached: not_found)',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'project_gateway' },
    input: t.Object({ ...ById, projectId: Slug('project to detach') }, { additionalProperties: false }),
    output: Success(),
  }),
  SetProjectGatewayURL: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'SetProjectGatewayURL',
    summary: "Set a gateway's customer-facing URL",
    notes:
      'The host part must be globally unique across active project gateways: a host bound to another gateway is already_exists. Warns when no project is attached or an attached project has no assigned models.',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'project_gateway' },
    input: t.Object(
      { ...ById, projectId: OwnerProject(), url: Url(1, 'customer-facing URL or hostname (1-2048)') },
      { additionalProperties: false },
    ),
    output: WithWarnings,
  }),
  SetProjectGatewayWorkspace: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'SetProjectGatewayWorkspace',
    summary: 'Move a gateway to another workspace (data plane) of its customer',
    notes:
      "The workspace must exist for the gateway's customer (not_found) and the gateway's slug must be free in it (already_exists). The warnings always remind that the hostname is unchanged and must be repointed (DNS and TLS certificate) to the new data plane's ingress; URL and model advisories may follow.",
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'project_gateway' },
    input: t.Object({ ...ById, workspaceId: Slug('target workspace slug') }, { additionalProperties: false }),
    output: WithWarnings,
  }),
};

const G = ProjectGatewayOps;
export const ProjectGatewayResources = {
  projectGateway: defineResource({
    owner: 'customer',
    audit: 'project_gateway',
    stored: [
      { table: 'project_gateways', removal: 'soft-delete', touch: true },
      // Attachments go with their project (a gateway serves projects of its own customer only).
      { table: 'project_gateway_projects', removal: 'delete', removedWith: ['project'] },
    ],
    change: { kind: 'PROJECT_GATEWAY', entity: 'project_gateway', keepsApiKeys: true },
    terraform: {
      type: 'gateway_project_gateway',
      description: 'A project gateway hosted on a workspace.',
      create: G.CreateProjectGateway,
      get: G.GetProjectGateway,
      update: G.UpdateProjectGateway,
      delete: G.DeleteProjectGateway,
      envelope: 'projectGateway',
      idField: 'id',
      args: [
        { api: 'customerId' },
        { api: 'workspaceId' },
        { api: 'projectGatewayId' },
        { api: 'url', update: true },
        { api: 'name', update: true },
        { api: 'description', update: true },
        { api: 'labels', update: true },
      ],
    },
  }),
};
