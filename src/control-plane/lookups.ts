import { and, eq, isNull } from 'drizzle-orm';
import { connectError } from '../core/errors.ts';
import { customers, projects, type CustomerRow, type ProjectRow } from '../store/schema/index.ts';
import type { Reader } from './deps.ts';
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

/** An active project of an active customer; empty projectId means the default project. */
export const findProject = async (db: Reader, customerId: string, projectId: string | null | undefined, field = 'projectId'): Promise<ProjectRow> => {
  await findCustomer(db, customerId);
  const slug = projectOrDefault(projectId);
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.customerId, customerId), eq(projects.projectId, slug), isNull(projects.deletedAt)))
    .limit(1);
  if (!row) throw connectError('not_found', `project '${slug}' of customer '${customerId}' not found`, field);
  return row;
};

/** Postgres unique violation (23505), through drizzle's wrapper on either driver. */
export const isUniqueViolation = (e: unknown): boolean => {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; depth++) {
    if (typeof cur === 'object' && 'code' in cur && (cur as { code: unknown }).code === '23505') return true;
    cur = typeof cur === 'object' && 'cause' in cur ? (cur as { cause: unknown }).cause : undefined;
  }
  return false;
};

/** Runs `fn`; a unique violation becomes `already_exists` with the given message. */
export const uniquely = async <T>(fn: () => Promise<T>, message: string, field: string): Promise<T> => {
  try {
    return await fn();
  } catch (e) {
    if (isUniqueViolation(e)) throw connectError('already_exists', message, field);
    throw e;
  }
};
