import { and, eq, inArray, isNull, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { connectError, type GatewayError } from '../core/errors.ts';
import { customers, projects, type CustomerRow, type ProjectRow } from '../store/schema/index.ts';
import type { Reader, Tx } from './deps.ts';
import { projectOrDefault } from './schemas.ts';

/** An active customer by slug, or `not_found` naming `field`. */
export const findCustomer = async (db: Reader, customerId: string, field = 'customerId'): Promise<CustomerRow> => {
  const [row] = await db
    .select()
    .from(customers)
    .where(and(eq(customers.customerId, customerId), isNull(customers.deletedAt)))
    .limit(1);
  if (!row) throw connectError('not_found', `customer '${customerId}' not found`, field);
  return row;
};

/** The row id of the active customer with this slug, or undefined (ManagementAuth's access check). */
export const liveCustomerId = async (db: Reader, customerId: string): Promise<string | undefined> => {
  const [row] = await db
    .select({ id: customers.id })
    .from(customers)
    .where(and(eq(customers.customerId, customerId), isNull(customers.deletedAt)))
    .limit(1);
  return row?.id;
};

/** An active project of an active customer; empty projectId means the default project. */
export const findProject = async (
  db: Reader,
  customerId: string,
  projectId: string | null | undefined,
  field = 'projectId',
): Promise<ProjectRow> => {
  const customer = await findCustomer(db, customerId);
  const slug = projectOrDefault(projectId);
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.customerUuid, customer.id), eq(projects.projectId, slug), isNull(projects.deletedAt)))
    .limit(1);
  if (!row) throw connectError('not_found', `project '${slug}' of customer '${customerId}' not found`, field);
  return row;
};

/**
 * Parent locks. Every create/attach path checks its parent and inserts in ONE transaction, holding
 * the parent row `FOR SHARE` (so a concurrent delete, which takes the parents `FOR UPDATE`, waits
 * for the insert to commit and then cascades over it, or runs first and the locked re-read finds
 * the parent gone: not_found). Children store the parent's row id, never only its slug.
 */
export const lockCustomer = async (
  tx: Tx,
  customerId: string,
  field = 'customerId',
  mode: 'share' | 'update' = 'share',
): Promise<CustomerRow> => {
  const [row] = await tx
    .select()
    .from(customers)
    .where(and(eq(customers.customerId, customerId), isNull(customers.deletedAt)))
    .limit(1)
    .for(mode);
  if (!row) throw connectError('not_found', `customer '${customerId}' not found`, field);
  return row;
};

/** The live project (empty projectId: the default one) of a live customer, both locked (see lockCustomer). */
export const lockProject = async (
  tx: Tx,
  customerId: string,
  projectId: string | null | undefined,
  field = 'projectId',
  mode: 'share' | 'update' = 'share',
): Promise<ProjectRow> => {
  const customer = await lockCustomer(tx, customerId, 'customerId', 'share');
  const slug = projectOrDefault(projectId);
  const [row] = await tx
    .select()
    .from(projects)
    .where(and(eq(projects.customerUuid, customer.id), eq(projects.projectId, slug), isNull(projects.deletedAt)))
    .limit(1)
    .for(mode);
  if (!row) throw connectError('not_found', `project '${slug}' of customer '${customerId}' not found`, field);
  return row;
};

/** `col` (a project_uuid column) belongs to the live project (customer slug, project slug) of a live customer. */
export const inLiveProject = (db: Reader, col: PgColumn, customerId: string, projectId: string | null | undefined): SQL =>
  inArray(
    col,
    db
      .select({ id: projects.id })
      .from(projects)
      .innerJoin(customers, and(eq(customers.id, projects.customerUuid), isNull(customers.deletedAt)))
      .where(and(eq(customers.customerId, customerId), eq(projects.projectId, projectOrDefault(projectId)), isNull(projects.deletedAt))),
  );

/** Postgres unique violation (23505), through drizzle's wrapper on either driver. */
export const isUniqueViolation = (e: unknown): boolean => {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; depth++) {
    if (typeof cur === 'object' && 'code' in cur && (cur as { code: unknown }).code === '23505') return true;
    cur = typeof cur === 'object' && 'cause' in cur ? (cur as { cause: unknown }).cause : undefined;
  }
  return false;
};

/** Runs `fn`; a unique violation becomes the error `refusal` makes (other failures pass through). */
export const onUniqueViolation = async <T>(fn: () => Promise<T>, refusal: () => GatewayError): Promise<T> => {
  try {
    return await fn();
  } catch (e) {
    if (isUniqueViolation(e)) throw refusal();
    throw e;
  }
};

/** Runs `fn`; a unique violation becomes `already_exists` with the given message. */
export const uniquely = <T>(fn: () => Promise<T>, message: string, field: string): Promise<T> =>
  onUniqueViolation(fn, () => connectError('already_exists', message, field));
