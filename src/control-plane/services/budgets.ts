import { and, asc, eq } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { formatUsd } from '../../core/money.ts';
import { BUDGET_PERIODS, type BudgetPeriod, budgetCounterKey, parseUsd, periodBounds } from '../../governance/periods.ts';
import { apiKeys, type BudgetRow, budgets } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import { findProject, lockProject } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { CustomerRef, Enum, PATTERNS, ProjectKey, Str, Success, Timestamp, ts } from '../schemas.ts';

/**
 * Budgets (contract §3.2): spend limits per project or per API key over a UTC day / ISO week /
 * month, or in total. The data planes reserve and settle spend on the shared counters
 * (src/data-plane/policies/limits.ts); `spentUsd` is read from the same counters: Redis when
 * REDIS_URL is set, else this process's (the embedded data plane's). It includes reservations of
 * requests in flight.
 */

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Budgets';
/** The largest limit: the counters compare exact integers of nano-USD (2^53 nano-USD ≈ 9 M USD). */
const MAX_LIMIT_NANO = 9_000_000 * 1_000_000_000;
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const scope = (i: { customerId: string; projectId: string }) => ({ customerId: i.customerId, projectId: i.projectId });
const BudgetName = () => Str(1, 253, { pattern: PATTERNS.ID, description: 'budget name (ID, 1-253), unique within the project' });

const BudgetOut = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    apiKeyId: t.Optional(t.String({ description: 'the API key covered; absent: the whole project' })),
    name: t.String(),
    limitUsd: t.String({ description: 'decimal string' }),
    period: t.String({ description: 'day, week, month or total' }),
    spentUsd: t.String({ description: 'decimal string: spend of the current period, reservations in flight included' }),
    resetsAt: t.Optional(Timestamp('start of the next period; absent for total')),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'Budget' },
);

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
  const find = async (db: Reader, i: { id?: string; customerId?: string; projectId?: string; name?: string }, lock = false): Promise<BudgetRow> => {
    let row: BudgetRow | undefined;
    if (i.id !== undefined) {
      if (!new RegExp(PATTERNS.UUID).test(i.id)) throw connectError('not_found', `budget '${i.id}' not found`, 'id');
      const q = db.select().from(budgets).where(eq(budgets.id, i.id));
      [row] = await (lock ? q.for('update') : q);
    } else if (i.customerId !== undefined && i.projectId !== undefined && i.name !== undefined) {
      const project = await findProject(db, i.customerId, i.projectId);
      const q = db.select().from(budgets).where(and(eq(budgets.projectUuid, project.id), eq(budgets.name, i.name)));
      [row] = await (lock ? q.for('update') : q);
    } else throw connectError('invalid_argument', "give 'id', or 'customerId', 'projectId' and 'name'", 'id');
    if (!row) throw connectError('not_found', `budget '${i.id ?? i.name}' not found`, i.id !== undefined ? 'id' : 'name');
    return row;
  };
  const ByRef = t.Object(
    {
      id: t.Optional(Str(1, 64, { description: 'budget id; or give customerId, projectId and name' })),
      customerId: t.Optional(CustomerRef()),
      projectId: t.Optional(ProjectKey()),
      name: t.Optional(BudgetName()),
    },
    { additionalProperties: false },
  );
  /** The scope of a by-reference call: the budget's project when the caller named it. */
  const refScope = (i: { customerId?: string; projectId?: string }) => (i.customerId !== undefined && i.projectId !== undefined ? { customerId: i.customerId, projectId: i.projectId } : undefined);
  const change = (customerId: string, projectId: string, name: string) => ({ resource: 'budget' as const, entityId: name, customerId, projectId });

  return [
    mutation(deps, {
      action: 'UPDATE',
      resource: 'budget',
      resourceId: (i) => rid(i.customerId, i.projectId, i.name),
      service: ADMIN,
      group: GROUP,
      name: 'UpsertBudget',
      summary: 'Create or replace a spend budget of a project or of one of its API keys',
      notes:
        "limitUsd: a decimal string (up to 9 fractional digits, at most 9000000). period: day (UTC), week (ISO, from Monday UTC), month (UTC) or total. Without apiKeyId the budget covers the whole project. Replacing a budget keeps its spend. Over the budget, requests get 429 rate_limit_error / budget_exceeded with Retry-After until resetsAt (none for total).",
      permission: 'project_admin',
      scope,
      input: t.Object(
        {
          ...Addr,
          apiKeyId: t.Optional(Str(0, 64, { description: 'API key id (empty or absent: the whole project)' })),
          name: BudgetName(),
          limitUsd: Str(1, 32, { description: 'decimal string, e.g. "25" or "0.5"' }),
          period: Enum(BUDGET_PERIODS, 'day, week, month or total'),
        },
        { additionalProperties: false },
      ),
      output: t.Object({ budget: BudgetOut }),
      handler: async (input, { tx, change: record }) => {
        const limit = parseUsd(input.limitUsd, MAX_LIMIT_NANO);
        if (limit === undefined) throw connectError('invalid_argument', "invalid field 'limitUsd': a decimal string such as \"25\" or \"0.5\" (at most 9 fractional digits, at most 9000000)", 'limitUsd');
        const project = await lockProject(tx, input.customerId, input.projectId);
        const apiKeyId = input.apiKeyId ? input.apiKeyId : null;
        if (apiKeyId !== null) {
          const [key] = new RegExp(PATTERNS.UUID).test(apiKeyId) ? await tx.select({ id: apiKeys.id }).from(apiKeys).where(and(eq(apiKeys.id, apiKeyId), eq(apiKeys.projectUuid, project.id))) : [];
          if (!key) throw connectError('not_found', `API key '${apiKeyId}' not found in project '${project.projectId}'`, 'apiKeyId');
        }
        const now = new Date();
        const [row] = await tx
          .insert(budgets)
          .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, apiKeyId, name: input.name, limitNanoUsd: limit, period: input.period, createdAt: now, updatedAt: now })
          .onConflictDoUpdate({ target: [budgets.projectUuid, budgets.name], set: { apiKeyId, limitNanoUsd: limit, period: input.period, updatedAt: now } })
          .returning();
        await record(change(project.customerId, project.projectId, input.name));
        return one(row as BudgetRow);
      },
    }),
    op({
      service: ADMIN,
      group: GROUP,
      name: 'GetBudget',
      summary: 'A budget with its current spend (by id, or by customerId, projectId and name)',
      permission: 'project_member',
      scope: async (i: { id?: string; customerId?: string; projectId?: string }) => (i.id !== undefined ? scopeOfId(deps.db, i.id) : refScope(i)),
      input: ByRef,
      output: t.Object({ budget: BudgetOut }),
      handler: async (input) => one(await find(deps.db, input)),
    }),
    op({
      service: ADMIN,
      group: GROUP,
      name: 'ListBudgets',
      summary: "A project's budgets with their current spend (ordered by name)",
      permission: 'project_member',
      scope,
      input: t.Object(Addr, { additionalProperties: false }),
      output: t.Object({ budgets: t.Array(BudgetOut) }),
      handler: async (input) => {
        const project = await findProject(deps.db, input.customerId, input.projectId);
        const rows = await deps.db.select().from(budgets).where(eq(budgets.projectUuid, project.id)).orderBy(asc(budgets.name));
        return { budgets: await view(rows) };
      },
    }),
    mutation(deps, {
      action: 'DELETE',
      resource: 'budget',
      resourceId: (i) => i.id ?? rid(i.customerId, i.projectId, i.name),
      service: ADMIN,
      group: GROUP,
      name: 'DeleteBudget',
      summary: 'Delete a budget (by id, or by customerId, projectId and name)',
      permission: 'project_admin',
      scope: async (i: { id?: string; customerId?: string; projectId?: string }) => (i.id !== undefined ? scopeOfId(deps.db, i.id) : refScope(i)),
      input: ByRef,
      output: Success(),
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
