import { and, eq, getTableColumns, getTableName, is, isNull } from 'drizzle-orm';
import { type PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { DECLARATIONS } from '../api/index.ts';
import type { Owner, StoredDecl } from '../api/resource.ts';
import * as schema from '../store/schema/index.ts';
import { type CustomerRow, customers, type ProjectRow, projects, serviceAccounts } from '../store/schema/index.ts';
import type { Tx } from './deps.ts';
import { lockCustomer, lockProject } from './lookups.ts';

/**
 * Soft-delete cascades, atomic with the delete itself, generated from the resource declarations
 * (src/api/ops/*: each declares its `owner` and the tables it keeps its rows in, with what the
 * owner's deletion does to them). Children are found by their parent's row id (the owner column,
 * `project_uuid` or `customer_uuid`; never by slug), and the parents are locked FOR UPDATE first: a
 * create/attach path holds its parent FOR SHARE from its check to its commit (see lookups.ts), so
 * every child row is either committed before the cascade reads (and is cascaded) or refused after
 * it (the parent is gone).
 *
 * Deleting a project removes the rows of every table removed with a project (its routes and
 * provider connections soft-deleted, its API keys, BYOK keys and user tokens revoked, its
 * assignments, governance, MCP profiles and credentials and gateway attachments deleted), then the
 * project's own row — so the project's keys stop working, and a project later re-created with the
 * same slug (another row) starts empty. Deleting a customer cascades each of its live projects,
 * then removes the rows of every table removed with a customer (data planes, project gateways,
 * user tokens, service accounts), then its own row.
 */

type Removable = Exclude<Owner, 'global'>;

/** One table a deletion of its owner reaches, and how (see StoredDecl). */
export interface CascadeStep extends Omit<StoredDecl, 'removedWith'> {
  /** The declaration it comes from. */
  resource: string;
}

/** Every table of the store schema by its SQL name. */
const exported: unknown[] = Object.values(schema);
export const STORE_TABLES: ReadonlyMap<string, PgTable> = new Map(
  exported.filter((v): v is PgTable => is(v, PgTable)).map((t) => [getTableName(t), t]),
);

/** The owners' own rows: removed last by their own cascade (a customer's projects are each cascaded first). */
const OWN_TABLE: Record<Removable, PgTable> = { project: projects, customer: customers };

/**
 * Tables that carry a project's or customer's row id and are left as they are when it is deleted,
 * with why (test/cascade-declared.test.ts: every other such table is reached by a cascade).
 */
export const KEPT_ON_DELETE: Readonly<Record<string, string>> = {
  gateway_files: "a project's files: reached only with a key of the project (none works once it is deleted); removed by DeleteFile",
  gateway_batches: "a project's batches: reached only with a key of the project; they expire",
  stored_conversations:
    "a project's stored conversations: reached only with a key of the project; they expire (GATEWAY_RESPONSE_RETENTION)",
  stored_conversation_items: 'the items of stored conversations: they expire with them',
};

/** The steps of the cascade of each owner, in declaration order, without the owners' own rows (projects, customers). */
export const cascadePlan = (): Record<Removable, CascadeStep[]> => {
  const plan: Record<Removable, CascadeStep[]> = { project: [], customer: [] };
  for (const [resource, decl] of Object.entries(DECLARATIONS)) {
    if (!('stored' in decl)) continue;
    const stored: readonly StoredDecl[] = decl.stored;
    for (const { removedWith, ...step } of stored) {
      const table = STORE_TABLES.get(step.table);
      if (!table) throw new Error(`${resource} declares the table '${step.table}', which the store schema does not define`);
      const owners: readonly Owner[] = removedWith ?? [decl.owner];
      // An owner's own table (projects of a customer) is its own cascade's.
      if (table === OWN_TABLE.project || table === OWN_TABLE.customer) continue;
      for (const owner of owners) if (owner !== 'global') plan[owner].push({ resource, ...step });
    }
  }
  return plan;
};

const PLAN = cascadePlan();

/** A column of a table by its property name (the owner column, `deletedAt`, …); a declaration naming a table without it fails at load. */
const column = (table: PgTable, name: string): PgColumn => {
  const c = getTableColumns(table)[name];
  if (!c) throw new Error(`the table '${getTableName(table)}' has no column ${name}`);
  return c;
};

const OWNER_COLUMN: Record<Removable, string> = { project: 'projectUuid', customer: 'customerUuid' };
const MARKER: Record<Exclude<StoredDecl['removal'], 'delete'>, string> = { 'soft-delete': 'deletedAt', revoke: 'revokedAt' };

/** A step bound to its table's columns: removes the rows of one owner. */
type Remove = (tx: Tx, ownerId: string, at: Date) => Promise<void>;

const bind = (owner: Removable, step: Omit<StoredDecl, 'removedWith'>): Remove => {
  const table = STORE_TABLES.get(step.table);
  if (!table) throw new Error(`the store schema defines no table '${step.table}'`);
  const ownerColumn = column(table, OWNER_COLUMN[owner]);
  if (step.removal === 'delete')
    return async (tx, ownerId) => {
      await tx.delete(table).where(eq(ownerColumn, ownerId));
    };
  const markerName = MARKER[step.removal];
  const marker = column(table, markerName);
  const columns = getTableColumns(table);
  const reason = step.removal === 'revoke' ? ['revokedReason', 'revokeReason'].find((n) => n in columns) : undefined;
  if (step.touch) column(table, 'updatedAt');
  return async (tx, ownerId, at) => {
    const values: Record<string, Date | string> = { [markerName]: at };
    if (step.touch) values.updatedAt = at;
    if (reason) values[reason] = `${owner} deleted`;
    await tx
      .update(table)
      .set(values)
      .where(and(eq(ownerColumn, ownerId), isNull(marker)));
  };
};

const REMOVE: Record<Removable, Remove[]> = {
  project: PLAN.project.map((s) => bind('project', s)),
  customer: PLAN.customer.map((s) => bind('customer', s)),
};

/** How an owner's own row is removed: its own declaration's (the `project` and `customer` resources). */
const ownRow = (owner: Removable): Remove => {
  const decl = DECLARATIONS[owner];
  const own = decl.stored.find((s) => s.table === getTableName(OWN_TABLE[owner]));
  if (!own) throw new Error(`the ${owner} resource does not declare its own table`);
  const idColumn = column(OWN_TABLE[owner], 'id');
  const touch = own.touch === true;
  return async (tx, id, at) => {
    await tx
      .update(OWN_TABLE[owner])
      .set(touch ? { deletedAt: at, updatedAt: at } : { deletedAt: at })
      .where(eq(idColumn, id));
  };
};
const REMOVE_OWN: Record<Removable, Remove> = { project: ownRow('project'), customer: ownRow('customer') };

const cascadeProject = async (tx: Tx, project: ProjectRow, at: Date): Promise<void> => {
  for (const remove of REMOVE.project) await remove(tx, project.id, at);
  await REMOVE_OWN.project(tx, project.id, at);
};

/** Locks the project (and its customer) and cascades its delete; not_found when it is gone. */
export const cascadeProjectDelete = async (tx: Tx, customerId: string, projectId: string, at: Date): Promise<ProjectRow> => {
  const project = await lockProject(tx, customerId, projectId, 'projectId', 'update');
  await cascadeProject(tx, project, at);
  return project;
};

/**
 * Revokes the live service accounts of a workspace (data plane) being deleted: its JWTs are refused
 * at once and its key leaves the JWKS, and a workspace later re-created with the same slug does not
 * take the old accounts.
 */
export const revokeWorkspaceAccounts = async (
  tx: Tx,
  customerUuid: string,
  workspaceId: string,
  at: Date,
  reason: string,
): Promise<void> => {
  await tx
    .update(serviceAccounts)
    .set({ revokedAt: at, revokeReason: reason })
    .where(
      and(eq(serviceAccounts.customerUuid, customerUuid), eq(serviceAccounts.workspaceId, workspaceId), isNull(serviceAccounts.revokedAt)),
    );
};

/**
 * Deleting a customer soft-deletes it and everything it owns. The customer and all its live
 * projects are locked FOR UPDATE before anything is read. The slug may then be reused by a new
 * customer (another row: nothing of the old one attaches to it).
 */
export const cascadeCustomerDelete = async (tx: Tx, customerId: string, at: Date): Promise<CustomerRow> => {
  const customer = await lockCustomer(tx, customerId, 'customerId', 'update');
  const live = await tx
    .select()
    .from(projects)
    .where(and(eq(projects.customerUuid, customer.id), isNull(projects.deletedAt)))
    .orderBy(projects.id)
    .for('update');
  for (const p of live) await cascadeProject(tx, p, at);
  for (const remove of REMOVE.customer) await remove(tx, customer.id, at);
  await REMOVE_OWN.customer(tx, customer.id, at);
  return customer;
};
