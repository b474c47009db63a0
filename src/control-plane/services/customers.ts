import { and, eq, isNull } from 'drizzle-orm';
import { DEFAULT_PROJECT, optTs, ts } from '../../api/kit.ts';
import { CustomerOps } from '../../api/ops/customers.ts';
import { customers, projects, type CustomerRow } from '../../store/schema/index.ts';
import { cascadeCustomerDelete } from '../cascade.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, targetsOf } from '../deps.ts';
import { findCustomer, lockCustomer, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

const { CreateCustomer, GetCustomer, ListCustomers, UpdateCustomer, DeleteCustomer } = CustomerOps;
const idOf = (i: { customerId?: unknown }) => rid(i.customerId);

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
  mutation(deps, CreateCustomer, {
    resourceId: idOf,
    handler: async (input, { tx, change }) => {
      const row = await uniquely(
        async () => {
          const [c] = await tx
            .insert(customers)
            .values({
              customerId: input.customerId,
              name: input.name ?? null,
              description: input.description ?? null,
              labels: input.labels ?? {},
            })
            .returning();
          return c as CustomerRow;
        },
        `customer '${input.customerId}' already exists`,
        'customerId',
      );
      await tx
        .insert(projects)
        .values({ customerUuid: row.id, customerId: input.customerId, projectId: DEFAULT_PROJECT, name: 'Default project' });
      await change({ resource: 'customer' as const, entityId: input.customerId, customerId: input.customerId });
      return { customer: customerView(row) };
    },
  }),
  op(GetCustomer, {
    scope: (i) => ({ customerId: i.customerId }),
    handler: async (input) => ({ customer: customerView(await findCustomer(deps.db, input.customerId)) }),
  }),
  op(ListCustomers, {
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
  mutation(deps, UpdateCustomer, {
    resourceId: idOf,
    handler: async (input, { tx }) => {
      const current = await lockCustomer(tx, input.customerId, 'customerId', 'update');
      const patch: Partial<typeof customers.$inferInsert> = { updatedAt: new Date() };
      if (input.name != null) patch.name = input.name;
      if (input.description != null) patch.description = input.description;
      if (input.labels !== undefined) patch.labels = input.labels;
      // Not configuration (no data plane reads a customer's name, description or labels): no change rows.
      const [row] = await tx
        .update(customers)
        .set(patch)
        .where(and(isNull(customers.deletedAt), eq(customers.id, current.id)))
        .returning();
      return { customer: customerView(row ?? current) };
    },
  }),
  mutation(deps, DeleteCustomer, {
    resourceId: idOf,
    handler: async (input, { tx, change }) => {
      const deletedAt = new Date();
      await lockCustomer(tx, input.customerId, 'customerId', 'update');
      // Targets before the cascade: the customer's data planes and gateways learn of their own deletion.
      const targets = await targetsOf(tx, { customerId: input.customerId });
      await cascadeCustomerDelete(tx, input.customerId, deletedAt);
      await change({ resource: 'customer' as const, entityId: input.customerId, customerId: input.customerId }, targets);
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
