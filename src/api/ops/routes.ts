import { Type as t } from '@sinclair/typebox';
import { CustomerRef, Deleted, Int32, ModelId, One, PATTERNS, Page, PageSize, PageToken, ProjectRef, Timestamp, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/**
 * Routes (contract §3.2): how a project serves a public model — its targets (a provider
 * connection and an upstream model each), tried by priority with a weighted split within one.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Routes';

const Target = t.Object(
  {
    connection: t.String({
      minLength: 1,
      maxLength: 253,
      pattern: PATTERNS.ID,
      description: 'provider connection name in the same project',
    }),
    model: ModelId('upstream model id'),
    priority: t.Optional(Int32({ minimum: 0, maximum: 100, description: '0 = primary, 1 = first backup, … (default 0)' })),
    weight: t.Optional(Int32({ minimum: 0, maximum: 10_000, description: 'traffic split within a priority (default 1)' })),
  },
  { additionalProperties: false },
);
const Targets = () => t.Array(Target, { minItems: 1, maxItems: 32 });
const PublicModel = () => ModelId('public model id (a catalog model)');
const TimeoutMs = () =>
  t.Optional(
    t.Union([Int32({ minimum: 1, maximum: 3_600_000 }), t.Null()], { description: 'per-attempt time-out in ms (default 120000)' }),
  );
const MaxRetries = () =>
  t.Optional(
    t.Union([Int32({ minimum: 0, maximum: 10 }), t.Null()], { description: 'retries of the same target before the next (default 0)' }),
  );

export const ROUTE_STRATEGIES = ['ordered', 'latency', 'headroom'] as const;
export type RouteStrategy = (typeof ROUTE_STRATEGIES)[number];
const Strategy = () =>
  t.Optional(
    t.Union([t.Literal('ordered'), t.Literal('latency'), t.Literal('headroom')], {
      description:
        "how targets are picked (default ordered): 'ordered' by priority with the weights, 'latency' the healthy target with the lowest recent latency first, 'headroom' the target whose connection has the most of its rate limit left first",
    }),
  );

/** Identifies a route by `id`, or by (customerId, projectId, model). */
const RouteRef = {
  id: t.Optional(Uuid('route UUID')),
  customerId: t.Optional(CustomerRef()),
  projectId: t.Optional(ProjectRef()),
  model: t.Optional(PublicModel()),
};

const TargetOut = t.Object({ connection: t.String(), model: t.String(), priority: Int32(), weight: Int32() });
export const RouteOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    model: t.String({ description: 'public model id (one route per model per project)' }),
    targets: t.Array(TargetOut, { description: 'in the order given' }),
    enabled: t.Boolean(),
    timeoutMs: t.Optional(Int32({ description: 'absent: the default (120000)' })),
    maxRetries: t.Optional(Int32({ description: 'absent: the default (0)' })),
    strategy: t.Optional(t.String({ description: "absent: the default ('ordered')" })),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'Route' },
);

export const RouteOps = {
  CreateRoute: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateRoute',
    summary: 'Create the route of a public model in a project (fallback by priority, weighted split within one)',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'route' },
    input: t.Object(
      {
        customerId: CustomerRef(),
        projectId: t.Optional(ProjectRef()),
        model: PublicModel(),
        targets: Targets(),
        enabled: t.Optional(t.Boolean({ description: 'default true' })),
        timeoutMs: TimeoutMs(),
        maxRetries: MaxRetries(),
        strategy: Strategy(),
      },
      { additionalProperties: false },
    ),
    output: One('route', RouteOut),
  }),
  GetRoute: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetRoute',
    summary: 'Get a route by id or by (customerId, projectId, model)',
    permission: 'project_member',
    input: t.Object(RouteRef, { additionalProperties: false }),
    output: One('route', RouteOut),
  }),
  ListRoutes: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListRoutes',
    summary: 'List the routes of a project',
    permission: 'project_member',
    input: t.Object(
      { customerId: CustomerRef(), projectId: t.Optional(ProjectRef()), pageSize: PageSize(), pageToken: PageToken() },
      { additionalProperties: false },
    ),
    output: Page('routes', RouteOut),
  }),
  UpdateRoute: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateRoute',
    summary: 'Update a route (unset fields stay unchanged; targets given replace the list)',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'route' },
    input: t.Object(
      {
        ...RouteRef,
        targets: t.Optional(Targets()),
        enabled: t.Optional(t.Boolean()),
        timeoutMs: TimeoutMs(),
        maxRetries: MaxRetries(),
        strategy: Strategy(),
      },
      { additionalProperties: false },
    ),
    output: One('route', RouteOut),
  }),
  DeleteRoute: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteRoute',
    summary: 'Delete a route (soft delete)',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'route' },
    input: t.Object(RouteRef, { additionalProperties: false }),
    output: Deleted(),
  }),
};

const R = RouteOps;
export const RouteResources = {
  route: defineResource({
    owner: 'project',
    audit: 'route',
    stored: [{ table: 'routes', removal: 'soft-delete' }],
    change: { kind: 'ROUTE', entity: 'route', keepsApiKeys: true },
    document: {
      section: 'routes',
      row: () =>
        t.Object({
          id: t.String(),
          projectUuid: t.String(),
          customerId: t.String(),
          projectId: t.String(),
          model: t.String(),
          targets: t.Array(t.Object({ connection: t.String(), model: t.String(), priority: t.Number(), weight: t.Number() })),
          enabled: t.Boolean(),
          timeoutMs: t.Union([t.Number(), t.Null()]),
          maxRetries: t.Union([t.Number(), t.Null()]),
          // Optional: a document from a management plane older than route strategies has none (ordered).
          strategy: t.Optional(t.Union([t.String(), t.Null()])),
        }),
    },
    terraform: {
      type: 'gateway_route',
      description: 'The route of a public model in a project: ordered targets, fallback by priority, weighted split within one.',
      create: R.CreateRoute,
      get: R.GetRoute,
      update: R.UpdateRoute,
      delete: R.DeleteRoute,
      envelope: 'route',
      key: [
        { api: 'customerId' },
        { api: 'projectId', forceNew: true, description: "project slug; unset means the customer's default project" },
        { api: 'model' },
      ],
      args: [
        { api: 'enabled', update: true },
        { api: 'timeoutMs', update: true },
        { api: 'maxRetries', update: true },
        { api: 'strategy', update: true },
      ],
      blocks: [
        {
          tf: 'target',
          api: 'targets',
          attrs: [
            { api: 'connection', required: true },
            { api: 'model', required: true },
            { api: 'priority', computed: true },
            { api: 'weight', computed: true },
          ],
          minItems: 0,
          maxItems: 0,
          description: 'a target, in order: connection (name), upstream model, priority (0 = primary), weight',
        },
      ],
    },
  }),
};
