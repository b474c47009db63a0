import { Type as t } from '@sinclair/typebox';
import {
  CustomerRef,
  CustomerSlug,
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
} from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/** Customers (tenants): each owns its projects, data planes and project gateways. */

const ADMIN = 'admin.v1.AdminService';
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

export const CustomerOps = {
  CreateCustomer: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateCustomer',
    summary: 'Create a customer (tenant) and its default project',
    notes: "The customer gets a project with projectId 'default' at once. A slug of a deleted customer may be reused.",
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'customer' },
    input: t.Object(
      { customerId: CustomerSlug(), description: Description(), labels: Labels(), name: Name() },
      { additionalProperties: false },
    ),
    output: One('customer', CustomerOut),
  }),
  GetCustomer: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetCustomer',
    summary: 'Get a customer',
    permission: 'customer_member',
    input: t.Object({ customerId: CustomerRef() }, { additionalProperties: false }),
    output: One('customer', CustomerOut),
  }),
  ListCustomers: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListCustomers',
    summary: 'List active customers (oldest first)',
    notes: 'Keyset paging: pageSize 0 or unset = 50, at most 1000; nextPageToken is empty when exhausted.',
    permission: 'platform_admin',
    input: t.Object({ pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('customers', CustomerOut),
  }),
  UpdateCustomer: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateCustomer',
    summary: 'Update a customer (unset or null fields stay unchanged; labels replaces the set)',
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'customer' },
    input: t.Object(
      { customerId: CustomerRef(), description: Description(), labels: Labels(), name: Name() },
      { additionalProperties: false },
    ),
    output: One('customer', CustomerOut),
  }),
  DeleteCustomer: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteCustomer',
    summary: 'Delete a customer (soft delete, cascading)',
    notes:
      'Soft-deletes the customer and everything it owns: projects (their routes and connections are soft-deleted, API keys revoked, assignments removed), data planes / workspaces and project gateways; its user tokens and service accounts are revoked (refused at once, their keys leave the JWKS). A customer re-created with the same slug is another row: no credential of the old one works for it.',
    permission: 'platform_admin',
    mutates: { action: 'DELETE', resource: 'customer' },
    input: t.Object({ customerId: CustomerRef() }, { additionalProperties: false }),
    output: Deleted(),
  }),
};

const C = CustomerOps;
export const CustomerResources = {
  customer: defineResource({
    owner: 'global',
    audit: 'customer',
    stored: [{ table: 'customers', removal: 'soft-delete', touch: true }],
    change: { kind: 'CUSTOMER', entity: 'customer', keepsApiKeys: false },
    terraform: {
      type: 'gateway_customer',
      description: 'A customer (tenant); created with its default project.',
      create: C.CreateCustomer,
      get: C.GetCustomer,
      update: C.UpdateCustomer,
      delete: C.DeleteCustomer,
      envelope: 'customer',
      key: [{ api: 'customerId' }],
      args: [
        { api: 'name', update: true },
        { api: 'description', update: true },
        { api: 'labels', update: true },
      ],
    },
  }),
};
