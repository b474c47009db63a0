import { and, asc, eq } from 'drizzle-orm';
import { connectError } from '../../core/errors.ts';
import { formatUsd } from '../../core/money.ts';
import { BudgetOps, checkLimitUsd } from '../../api/ops/budgets.ts';
import { PATTERNS, ts } from '../../api/kit.ts';
import { type BudgetPeriod, budgetCounterKey, periodBounds } from '../../governance/periods.ts';
import { apiKeys, type BudgetRow, budgets } from '../../store/schema/index.ts';
import { op, type OpDef, type Unchecked } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import { findProject, lockProject } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';

/**
 * Budgets (contract §3.2): spend limits per project or per API key over a UTC day / ISO week /
 * month, or in total. The data planes reserve and settle spend on the shared counters
 * (src/data-plane/policies/limits.ts); `spentUsd` is read from the same counters: Redis when
 * REDIS_URL is set, else this process's (the embedded data plane's). It includes reservations of
 * requests in flight.
 */

const { UpsertBudget, GetBudget, ListBudgets, DeleteBudget } = BudgetOps;
type Addr = Unchecked<{ customerId: string; projectId: string }>;
type Ref = Unchecked<{ id: string; customerId: string; projectId: string; name: string }>;
const scope = (i: Addr) => ({ customerId: i.customerId, projectId: i.projectId });
/** The scope of a by-reference call: the budget's project when the caller named it. */
const refScope = (i: Addr) =>
  i.customerId !== undefined && i.projectId !== undefined ? { customerId: i.customerId, projectId: i.projectId } : undefined;

export const budgetOps = (deps: ControlDeps): OpDef[] => {
  const view = async (rows: readonly BudgetRow[]) => {
    const now = Date.now();
    const keys = rows.map((r) => budgetCounterKey(r.id, r.period as BudgetPeriod, now));
    let spent: number[] = keys.map(() => 0);
    if (deps.counters && keys.length > 0) {
      try {
        spent = await deps.counters.read(keys);
      } catch {
        throw connectError('unavailable', 'the budget counters (REDIS_URL) are unreachable; try again shortly');
      }
    }
    return rows.map((r, i) => {
      const end = periodBounds(r.period as BudgetPeriod, now).end;
      return {
        id: r.id,
        customerId: r.customerId,
        projectId: r.projectId,
        ...(r.apiKeyId ? { apiKeyId: r.apiKeyId } : {}),
        name: r.name,
        limitUsd: formatUsd(r.limitNanoUsd),
        period: r.period,
        spentUsd: formatUsd(Math.max(0, spent[i] ?? 0)),
        ...(end === null ? {} : { resetsAt: new Date(end).toISOString() }),
        createdAt: ts(r.createdAt),
        updatedAt: ts(r.updatedAt),
      };
    });
  };
  const one = async (r: BudgetRow) => ({ budget: (await view([r]))[0] as Awaited<ReturnType<typeof view>>[number] });
  const find = async (
    db: Reader,
    i: { id?: string; customerId?: string; projectId?: string; name?: string },
    lock = false,
  ): Promise<BudgetRow> => {
    let row: BudgetRow | undefined;
    if (i.id !== undefined) {
      if (!new RegExp(PATTERNS.UUID).test(i.id)) throw connectError('not_found', `budget '${i.id}' not found`, 'id');
      const q = db.select().from(budgets).where(eq(budgets.id, i.id));
      [row] = await (lock ? q.for('update') : q);
    } else if (i.customerId !== undefined && i.projectId !== undefined && i.name !== undefined) {
      const project = await findProject(db, i.customerId, i.projectId);
      const q = db
        .select()
        .from(budgets)
        .where(and(eq(budgets.projectUuid, project.id), eq(budgets.name, i.name)));
      [row] = await (lock ? q.for('update') : q);
    } else throw connectError('invalid_argument', "give 'id', or 'customerId', 'projectId' and 'name'", 'id');
    if (!row) throw connectError('not_found', `budget '${i.id ?? i.name}' not found`, i.id !== undefined ? 'id' : 'name');
    return row;
  };
  const change = (customerId: string, projectId: string, name: string) => ({
    resource: 'budget' as const,
    entityId: name,
    customerId,
    projectId,
  });
  const byRefScope = async (i: Ref) => (typeof i.id === 'string' ? scopeOfId(deps.db, i.id) : i.id !== undefined ? undefined : refScope(i));

  return [
    mutation(deps, UpsertBudget, {
      resourceId: (i) => rid(i.customerId, i.projectId, i.name),
      scope,
      handler: async (input, { tx, change: record }) => {
        const limit = checkLimitUsd(input.limitUsd);
        const project = await lockProject(tx, input.customerId, input.projectId);
        const apiKeyId = input.apiKeyId ? input.apiKeyId : null;
        if (apiKeyId !== null) {
          const [key] = new RegExp(PATTERNS.UUID).test(apiKeyId)
            ? await tx
                .select({ id: apiKeys.id })
                .from(apiKeys)
                .where(and(eq(apiKeys.id, apiKeyId), eq(apiKeys.projectUuid, project.id)))
            : [];
          if (!key) throw connectError('not_found', `API key '${apiKeyId}' not found in project '${project.projectId}'`, 'apiKeyId');
        }
        const now = new Date();
        const [row] = await tx
          .insert(budgets)
          .values({
            projectUuid: project.id,
            customerId: project.customerId,
            projectId: project.projectId,
            apiKeyId,
            name: input.name,
            limitNanoUsd: limit,
            period: input.period,
            createdAt: now,
            updatedAt: now,
          })
          .onConflictDoUpdate({
            target: [budgets.projectUuid, budgets.name],
            set: { apiKeyId, limitNanoUsd: limit, period: input.period, updatedAt: now },
          })
          .returning();
        await record(change(project.customerId, project.projectId, input.name));
        return one(row as BudgetRow);
      },
    }),
    op(GetBudget, {
      scope: byRefScope,
      handler: async (input) => one(await find(deps.db, input)),
    }),
    op(ListBudgets, {
      scope,
      handler: async (input) => {
        const project = await findProject(deps.db, input.customerId, input.projectId);
        const rows = await deps.db.select().from(budgets).where(eq(budgets.projectUuid, project.id)).orderBy(asc(budgets.name));
        return { budgets: await view(rows) };
      },
    }),
    mutation(deps, DeleteBudget, {
      resourceId: (i) => (i.id === undefined || i.id === null ? rid(i.customerId, i.projectId, i.name) : rid(i.id)),
      scope: byRefScope,
      handler: async (input, { tx, change: record }) => {
        const row = await find(tx, input, true);
        await lockProject(tx, row.customerId, row.projectId);
        await tx.delete(budgets).where(eq(budgets.id, row.id));
        await record(change(row.customerId, row.projectId, row.name));
        return { success: true };
      },
    }),
  ];
};

/** The project of a budget id, for the permission check (unknown id: no scope → the handler's not_found for admins). */
const scopeOfId = async (db: Reader, id: string): Promise<{ customerId: string; projectId: string } | undefined> => {
  if (!new RegExp(PATTERNS.UUID).test(id)) return undefined;
  const [row] = await db.select({ customerId: budgets.customerId, projectId: budgets.projectId }).from(budgets).where(eq(budgets.id, id));
  return row;
};
