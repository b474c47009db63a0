import { t } from 'elysia';
import { customers, projects, type CustomerRow, type ProjectRow } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, recordChange } from '../deps.ts';
import { findCustomer, findProject, uniquely } from '../lookups.ts';
import { CustomerRef, CustomerSlug, DEFAULT_PROJECT, Description, Labels, Name, ProjectSlug, ts } from '../schemas.ts';

export const customerView = (c: CustomerRow) => ({
  id: c.id,
  customerId: c.customerId,
  name: c.name ?? '',
  description: c.description ?? '',
  labels: c.labels,
  createdAt: ts(c.createdAt),
  updatedAt: ts(c.updatedAt),
  ...(c.deletedAt ? { deletedAt: ts(c.deletedAt) } : {}),
});

export const projectView = (p: ProjectRow) => ({
  id: p.id,
  customerId: p.customerId,
  projectId: p.projectId,
  name: p.name ?? '',
  description: p.description ?? '',
  labels: p.labels,
  createdAt: ts(p.createdAt),
  updatedAt: ts(p.updatedAt),
  ...(p.deletedAt ? { deletedAt: ts(p.deletedAt) } : {}),
});

const ADMIN = 'admin.v1.AdminService' as const;

/** Customers and projects: the minimum the inference foundation needs (create and read). */
export const tenancyOps = (deps: ControlDeps): OpDef[] => [
  op({
    service: ADMIN,
    name: 'CreateCustomer',
    summary: 'Create a customer (tenant) and its default project',
    permission: 'platform_admin',
    input: t.Object({ customerId: CustomerSlug(), name: Name(), description: Description(), labels: Labels() }, { additionalProperties: false }),
    handler: async (input) => {
      const row = await uniquely(
        () =>
          deps.db.transaction(async (tx) => {
            const [c] = await tx
              .insert(customers)
              .values({ customerId: input.customerId, name: input.name ?? null, description: input.description ?? null, labels: input.labels ?? {} })
              .returning();
            await tx.insert(projects).values({ customerId: input.customerId, projectId: DEFAULT_PROJECT, name: 'Default project' });
            await recordChange(tx, { kind: 'CUSTOMER', entity: 'customer', entityId: input.customerId, customerId: input.customerId });
            return c as CustomerRow;
          }),
        `customer '${input.customerId}' already exists`,
        'customerId',
      );
      await deps.changed();
      return { customer: customerView(row) };
    },
  }),
  op({
    service: ADMIN,
    name: 'GetCustomer',
    summary: 'Get a customer',
    permission: 'platform_admin',
    input: t.Object({ customerId: CustomerRef() }, { additionalProperties: false }),
    handler: async (input) => ({ customer: customerView(await findCustomer(deps.db, input.customerId)) }),
  }),
  op({
    service: ADMIN,
    name: 'CreateProject',
    summary: 'Create a project in a customer',
    permission: 'platform_admin',
    input: t.Object(
      { customerId: CustomerRef(), projectId: ProjectSlug(), name: Name(), description: Description(), labels: Labels() },
      { additionalProperties: false },
    ),
    handler: async (input) => {
      await findCustomer(deps.db, input.customerId);
      const row = await uniquely(
        () =>
          deps.db.transaction(async (tx) => {
            const [p] = await tx
              .insert(projects)
              .values({
                customerId: input.customerId,
                projectId: input.projectId,
                name: input.name ?? null,
                description: input.description ?? null,
                labels: input.labels ?? {},
              })
              .returning();
            await recordChange(tx, { kind: 'PROJECT', entity: 'project', entityId: input.projectId, customerId: input.customerId, projectId: input.projectId });
            return p as ProjectRow;
          }),
        `project '${input.projectId}' already exists in customer '${input.customerId}'`,
        'projectId',
      );
      await deps.changed();
      return { project: projectView(row) };
    },
  }),
  op({
    service: ADMIN,
    name: 'GetProject',
    summary: 'Get a project',
    permission: 'project_member',
    scope: (i) => ({ customerId: i.customerId, projectId: i.projectId }),
    input: t.Object({ customerId: CustomerRef(), projectId: t.String({ minLength: 1, maxLength: 253 }) }, { additionalProperties: false }),
    handler: async (input) => ({ project: projectView(await findProject(deps.db, input.customerId, input.projectId)) }),
  }),
];
