import { type TSchema, Type as t } from '@sinclair/typebox';
import { connectError } from '../../core/errors.ts';
import {
  CustomerSlug,
  Deleted,
  Description,
  Labels,
  LabelsOut,
  Name,
  One,
  OptTimestamp,
  PATTERNS,
  Page,
  PageSize,
  PageToken,
  ProjectRef,
  Str,
  Timestamp,
  Url,
  Uuid,
} from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/**
 * Data planes and workspaces: one resource (a workspace IS a data plane), one table, two sets of
 * operations built from one template (`flavorSpecs`). The customer-chosen slug is `dataplaneId` in
 * the Dataplane operations and `workspaceId` in the Workspace operations; slugs are unique per
 * customer across both.
 */

const ADMIN = 'admin.v1.AdminService';

/** How one set of operations names the resource: its noun, its slug property, its envelopes. */
export interface Flavor<K extends string, E extends string, L extends string> {
  noun: 'Dataplane' | 'Workspace';
  plural: 'Dataplanes' | 'Workspaces';
  /** The slug's property name. */
  key: K;
  /** The single-resource envelope (`{dataplane}`). */
  envelope: E;
  /** The list's property (`{dataplanes, nextPageToken}`). */
  list: L;
}

/** `{ [key]: schema }`, keeping the key's literal type (as kit.ts `One` does). */
const keyed = <K extends string, S extends TSchema>(key: K, schema: S) => ({ [key]: schema }) as { [P in K]: S };

/** The gateway endpoint's URL is an absolute http(s) URL with a host; else `invalid_argument` on `url`. */
export const checkDataplaneUrl = (url: string): void => {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || !u.hostname)
    throw connectError('invalid_argument', "invalid field 'url': must be an absolute http(s) URL", 'url');
};

const OptionalCustomer = () =>
  Str(0, 63, {
    pattern: `^$|${PATTERNS.SLUG}`,
    description: 'customer slug (SLUG, max 63); empty or unset lists all customers (platform admins only)',
  });

/** The operations of one flavor (Create, Get, List, Update, Delete, SetProject, SetURL + the noun). */
export const flavorSpecs = <K extends string, E extends string, L extends string>(f: Flavor<K, E, L>) => {
  const group = f.plural === 'Dataplanes' ? 'Data planes' : 'Workspaces';
  const lower = f.noun.toLowerCase();
  const slugSchema = Str(1, 253, { pattern: PATTERNS.ID, description: `the customer-chosen slug (ID, 1-253), unique within the customer` });
  const Out = t.Object(
    {
      id: t.String({ description: 'server-generated UUID' }),
      ...keyed(f.key, t.String({ description: 'slug, unique within the customer' })),
      customerId: t.String(),
      projectId: t.String({ description: "the project it belongs to; 'default' when none was given" }),
      name: t.String(),
      description: t.String(),
      labels: LabelsOut(),
      url: t.String({ description: 'customer-facing gateway URL; empty until set' }),
      createdAt: Timestamp(),
      updatedAt: Timestamp(),
      deletedAt: OptTimestamp('set once soft-deleted (never returned by Get/List)'),
    },
    { description: `${f.noun} (a workspace is a data plane: same resource)` },
  );
  const Wrapped = One(f.envelope, Out);
  const ById = { id: Uuid(`${lower} UUID (the internal id, not the slug)`) };
  return {
    Create: defineOp({
      service: ADMIN,
      group,
      name: `Create${f.noun}`,
      summary: `Create a ${f.noun === 'Dataplane' ? 'data plane' : 'workspace'} of a customer`,
      notes: `${f.key} is unique among the customer's active data planes and workspaces (one slug space). projectId empty or unset means the default project; a given project must exist.`,
      permission: 'platform_admin',
      mutates: { action: 'CREATE', resource: 'dataplane' },
      input: t.Object(
        {
          customerId: CustomerSlug(),
          ...keyed(f.key, slugSchema),
          description: Description(),
          labels: Labels(),
          name: Name(),
          projectId: t.Optional(ProjectRef()),
        },
        { additionalProperties: false },
      ),
      output: Wrapped,
    }),
    Get: defineOp({
      service: ADMIN,
      group,
      name: `Get${f.noun}`,
      summary: `Get a ${lower} by its internal id`,
      permission: 'customer_member',
      input: t.Object(ById, { additionalProperties: false }),
      output: Wrapped,
    }),
    List: defineOp({
      service: ADMIN,
      group,
      name: `List${f.plural}`,
      summary: `List active ${f.noun === 'Dataplane' ? 'data planes' : 'workspaces'} (oldest first)${f.noun === 'Workspace' ? '' : ''}`,
      notes: 'Keyset paging: pageSize 0 or unset = 50, at most 1000. A user token must name its own customer.',
      permission: 'customer_member',
      input: t.Object(
        { customerId: t.Optional(OptionalCustomer()), pageSize: PageSize(), pageToken: PageToken() },
        { additionalProperties: false },
      ),
      output: Page(f.list, Out),
    }),
    Update: defineOp({
      service: ADMIN,
      group,
      name: `Update${f.noun}`,
      summary: 'Update name, description, labels (unset or null fields stay unchanged; labels replaces the set)',
      permission: 'platform_admin',
      mutates: { action: 'UPDATE', resource: 'dataplane' },
      input: t.Object({ ...ById, description: Description(), labels: Labels(), name: Name() }, { additionalProperties: false }),
      output: Wrapped,
    }),
    Delete: defineOp({
      service: ADMIN,
      group,
      name: `Delete${f.noun}`,
      summary: `Delete a ${lower} (soft delete)`,
      notes:
        'A data plane that still hosts active project gateways is failed_precondition: delete or move them first. Its service accounts are revoked: their JWTs are refused at once and their keys leave the JWKS.',
      permission: 'platform_admin',
      mutates: { action: 'DELETE', resource: 'dataplane' },
      input: t.Object(ById, { additionalProperties: false }),
      output: Deleted(),
    }),
    SetProject: defineOp({
      service: ADMIN,
      group,
      name: `Set${f.noun}Project`,
      summary: `Move a ${lower} to a project (omit or empty: back to the default project)`,
      permission: 'platform_admin',
      mutates: { action: 'UPDATE', resource: 'dataplane' },
      input: t.Object({ ...ById, projectId: t.Optional(ProjectRef(255)) }, { additionalProperties: false }),
      output: Wrapped,
    }),
    SetURL: defineOp({
      service: ADMIN,
      group,
      name: `Set${f.noun}URL`,
      summary: "Set the URL of the data plane's gateway endpoint",
      notes:
        'url: the full http(s) URL of the endpoint (1-2048). triggerUpdate true records a PROXY_URL configuration event (payload: {url}) for the data plane after persisting the URL; false only stores it.',
      permission: 'platform_admin',
      mutates: { action: 'UPDATE', resource: 'dataplane' },
      input: t.Object(
        {
          ...ById,
          url: Url(1, 'full https URL of the gateway endpoint (1-2048)'),
          triggerUpdate: t.Optional(t.Boolean({ description: 'send a PROXY_URL config event (default false)' })),
        },
        { additionalProperties: false },
      ),
      output: Wrapped,
    }),
  };
};

const D = flavorSpecs({ noun: 'Dataplane', plural: 'Dataplanes', key: 'dataplaneId', envelope: 'dataplane', list: 'dataplanes' });
const W = flavorSpecs({ noun: 'Workspace', plural: 'Workspaces', key: 'workspaceId', envelope: 'workspace', list: 'workspaces' });

export const DataplaneOps = {
  CreateDataplane: D.Create,
  GetDataplane: D.Get,
  ListDataplanes: D.List,
  UpdateDataplane: D.Update,
  DeleteDataplane: D.Delete,
  SetDataplaneProject: D.SetProject,
  SetDataplaneURL: D.SetURL,
};

export const WorkspaceOps = {
  CreateWorkspace: W.Create,
  GetWorkspace: W.Get,
  ListWorkspaces: W.List,
  UpdateWorkspace: W.Update,
  DeleteWorkspace: W.Delete,
  SetWorkspaceProject: W.SetProject,
  SetWorkspaceURL: W.SetURL,
};

export const DataplaneResources = {
  dataplane: defineResource({
    owner: 'customer',
    audit: 'dataplane',
    stored: [{ table: 'dataplanes', removal: 'soft-delete', touch: true }],
    change: { kind: 'DATAPLANE', entity: 'dataplane', keepsApiKeys: true },
    terraform: {
      type: 'gateway_dataplane',
      description: 'A data plane of a customer.',
      create: D.Create,
      get: D.Get,
      update: D.Update,
      delete: D.Delete,
      envelope: 'dataplane',
      idField: 'id',
      args: [
        { api: 'customerId' },
        { api: 'dataplaneId' },
        { api: 'projectId' },
        { api: 'name', update: true },
        { api: 'description', update: true },
        { api: 'labels', update: true },
      ],
    },
  }),
  /** A workspace is a data plane: its changes are the data plane's. */
  workspace: defineResource({
    owner: 'customer',
    terraform: {
      type: 'gateway_workspace',
      description: 'A workspace (a data plane) of a customer.',
      create: W.Create,
      get: W.Get,
      update: W.Update,
      delete: W.Delete,
      envelope: 'workspace',
      idField: 'id',
      args: [
        { api: 'customerId' },
        { api: 'workspaceId' },
        { api: 'projectId' },
        { api: 'name', update: true },
        { api: 'description', update: true },
        { api: 'labels', update: true },
      ],
    },
  }),
  /** A workspace URL adopted through a PROXY_URL event (SetWorkspaceURL with triggerUpdate). */
  proxyUrl: defineResource({ owner: 'customer', change: { kind: 'PROXY_URL', entity: 'dataplane', keepsApiKeys: true } }),
};
