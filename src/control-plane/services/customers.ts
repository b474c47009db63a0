import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { customers, projects, type CustomerRow } from '../../store/schema/index.ts';
import { cascadeCustomerDelete } from '../cascade.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, targetsOf } from '../deps.ts';
import { findCustomer, lockCustomer, uniquely } from '../lookups.ts';
import { mutation } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import {
  CustomerRef,
  CustomerSlug,
  DEFAULT_PROJECT,
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
  Timestamp,
  optTs,
  ts,
} from '../schemas.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Customers';

export const CustomerOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String({ description: 'slug, unique among active customers' }),
    name: t.String(),
    description: t.String(),
    labels: LabelsOut(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    deletedAt: OptTimestamp('set once soft-deleted (never returned by Get/List)'),
  },
  { description: 'Customer (tenant)' },
);

export const customerView = (c: CustomerRow) => ({
  id: c.id,
  customerId: c.customerId,
  name: c.name ?? '',
  description: c.description ?? '',
  labels: c.labels,
  createdAt: ts(c.createdAt),
  updatedAt: ts(c.updatedAt),
  deletedAt: optTs(c.deletedAt),
});

export const customerOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'customer',
    resourceId: (i) => i.customerId,
    service: ADMIN,
    group: GROUP,
    name: 'CreateCustomer',
    summary: 'Create a customer (tenant) and its default project',
    notes: "The customer gets a project with projectId 'default' at once. A slug of a deleted customer may be reused.",
    permission: 'platform_admin',
    input: t.Object({ customerId: CustomerSlug(), description: Description(), labels: Labels(), name: Name() }, { additionalProperties: false }),
    output: One('customer', CustomerOut),
    handler: async (input, { tx, change }) => {
      const row = await uniquely(
        async () => {
          const [c] = await tx
            .insert(customers)
            .values({ customerId: input.customerId, name: input.name ?? null, description: input.description ?? null, labels: input.labels ?? {} })
            .returning();
          return c as CustomerRow;
        },
        `customer '${input.customerId}' already exists`,
        'customerId',
      );
      await tx.insert(projects).values({ customerUuid: row.id, customerId: input.customerId, projectId: DEFAULT_PROJECT, name: 'Default project' });
      await change({ kind: 'CUSTOMER', entity: 'customer', entityId: input.customerId, customerId: input.customerId });
      return { customer: customerView(row) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetCustomer',
    summary: 'Get a customer',
    permission: 'customer_member',
    scope: (i) => ({ customerId: i.customerId }),
    input: t.Object({ customerId: CustomerRef() }, { additionalProperties: false }),
    output: One('customer', CustomerOut),
    handler: async (input) => ({ customer: customerView(await findCustomer(deps.db, input.customerId)) }),
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListCustomers',
    summary: 'List active customers (oldest first)',
    notes: 'Keyset paging: pageSize 0 or unset = 50, at most 1000; nextPageToken is empty when exhausted.',
    permission: 'platform_admin',
    input: t.Object({ pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('customers', CustomerOut),
    handler: async (input) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(customers.createdAt, customers.id, input.pageToken);
      const rows = await deps.db
        .select()
        .from(customers)
        .where(and(isNull(customers.deletedAt), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { customers: p.items.map(customerView), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'customer',
    resourceId: (i) => i.customerId,
    service: ADMIN,
    group: GROUP,
    name: 'UpdateCustomer',
    summary: 'Update a customer (unset or null fields stay unchanged; labels replaces the set)',
    permission: 'platform_admin',
    input: t.Object({ customerId: CustomerRef(), description: Description(), labels: Labels(), name: Name() }, { additionalProperties: false }),
    output: One('customer', CustomerOut),
    handler: async (input, { tx }) => {
      const current = await lockCustomer(tx, input.customerId, 'customerId', 'update');
      const patch: Partial<typeof customers.$inferInsert> = { updatedAt: new Date() };
      if (input.name != null) patch.name = input.name;
      if (input.description != null) patch.description = input.description;
      if (input.labels !== undefined) patch.labels = input.labels;
      // Not configuration (no data plane reads a customer's name, description or labels): no change rows.
      const [row] = await tx.update(customers).set(patch).where(and(isNull(customers.deletedAt), eq(customers.id, current.id))).returning();
      return { customer: customerView(row ?? current) };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'customer',
    resourceId: (i) => i.customerId,
    service: ADMIN,
    group: GROUP,
    name: 'DeleteCustomer',
    summary: 'Delete a customer (soft delete, cascading)',
    notes:
      'Soft-deletes the customer and everything it owns: projects (their routes and connections are soft-deleted, API keys revoked, assignments removed), data planes / workspaces and project gateways; its user tokens and service accounts are revoked (refused at once, their keys leave the JWKS). A customer re-created with the same slug is another row: no credential of the old one works for it.',
    permission: 'platform_admin',
    input: t.Object({ customerId: CustomerRef() }, { additionalProperties: false }),
    output: Deleted(),
    handler: async (input, { tx, change }) => {
      const deletedAt = new Date();
      await lockCustomer(tx, input.customerId, 'customerId', 'update');
      // Targets before the cascade: the customer's data planes and gateways learn of their own deletion.
      const targets = await targetsOf(tx, { customerId: input.customerId });
      await cascadeCustomerDelete(tx, input.customerId, deletedAt);
      await change({ kind: 'CUSTOMER', entity: 'customer', entityId: input.customerId, customerId: input.customerId }, targets);
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
