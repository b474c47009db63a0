import { Type as t } from '@sinclair/typebox';
import { connectError } from '../../core/errors.ts';
import { BUDGET_PERIODS, parseUsd } from '../../governance/periods.ts';
import { CustomerRef, Enum, PATTERNS, ProjectKey, Str, Success, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource, reqText } from '../resource.ts';

/**
 * Budgets (contract §3.2): spend limits per project or per API key over a UTC day / ISO week /
 * month, or in total. Enforced by the data planes (src/data-plane/policies/limits.ts).
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Budgets';
/** The largest limit: the counters compare exact integers of nano-USD (2^53 nano-USD ≈ 9 M USD). */
export const MAX_LIMIT_NANO = 9_000_000 * 1_000_000_000;
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const BudgetName = () => Str(1, 253, { pattern: PATTERNS.ID, description: 'budget name (ID, 1-253), unique within the project' });

export const BudgetOut = t.Object(
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

/** A budget's `limitUsd` in nano-USD, or `invalid_argument` (pure: the Terraform provider can run the same check at plan time). */
export const checkLimitUsd = (limitUsd: string): number => {
  const limit = parseUsd(limitUsd, MAX_LIMIT_NANO);
  if (limit === undefined)
    throw connectError(
      'invalid_argument',
      'invalid field \'limitUsd\': a decimal string such as "25" or "0.5" (at most 9 fractional digits, at most 9000000)',
      'limitUsd',
    );
  return limit;
};

/** A budget by `id`, or by `customerId`, `projectId` and `name`. */
const ByRef = t.Object(
  {
    id: t.Optional(Str(1, 64, { description: 'budget id; or give customerId, projectId and name' })),
    customerId: t.Optional(CustomerRef()),
    projectId: t.Optional(ProjectKey()),
    name: t.Optional(BudgetName()),
  },
  { additionalProperties: false },
);
const One = t.Object({ budget: BudgetOut });

export const BudgetOps = {
  UpsertBudget: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpsertBudget',
    summary: 'Create or replace a spend budget of a project or of one of its API keys',
    notes:
      'limitUsd: a decimal string (up to 9 fractional digits, at most 9000000). period: day (UTC), week (ISO, from Monday UTC), month (UTC) or total. Without apiKeyId the budget covers the whole project. Replacing a budget keeps its spend. Over the budget, requests get 429 rate_limit_error / budget_exceeded with Retry-After until resetsAt (none for total).',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'budget' },
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
    output: One,
  }),
  GetBudget: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetBudget',
    summary: 'A budget with its current spend (by id, or by customerId, projectId and name)',
    permission: 'project_member',
    input: ByRef,
    output: One,
  }),
  ListBudgets: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListBudgets',
    summary: "A project's budgets with their current spend (ordered by name)",
    permission: 'project_member',
    input: t.Object(Addr, { additionalProperties: false }),
    output: t.Object({ budgets: t.Array(BudgetOut) }),
  }),
  DeleteBudget: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteBudget',
    summary: 'Delete a budget (by id, or by customerId, projectId and name)',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'budget' },
    input: ByRef,
    output: Success(),
  }),
};

export const BudgetResources = {
  budget: defineResource({
    owner: 'project',
    audit: 'budget',
    stored: [{ table: 'budgets', removal: 'delete' }],
    change: { kind: 'BUDGET', entity: 'budget', keepsApiKeys: true },
    /** Spend budgets (contract §3.2); `limitNanoUsd` in nano-USD. */
    document: {
      section: 'budgets',
      row: () =>
        t.Object({
          id: t.String(),
          projectUuid: t.String(),
          apiKeyId: t.Union([t.String(), t.Null()]),
          name: t.String(),
          limitNanoUsd: t.Number(),
          period: t.String(),
        }),
    },
    terraform: {
      type: 'gateway_budget',
      description: 'A spend budget of a project (or of one of its API keys) over a day, week, month or in total.',
      create: BudgetOps.UpsertBudget,
      get: BudgetOps.GetBudget,
      update: BudgetOps.UpsertBudget,
      delete: BudgetOps.DeleteBudget,
      envelope: 'budget',
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'name' }],
      args: [
        { api: 'apiKeyId', update: true },
        { api: 'limitUsd', update: true },
        { api: 'period', update: true },
        {
          computed: 'spent_usd',
          api: 'spentUsd',
          description: 'spend in the current period (decimal USD, reservations in flight included)',
          volatile: true,
        },
        { computed: 'resets_at', api: 'resetsAt', description: 'RFC 3339; empty for a total budget', volatile: true },
      ],
      check: (r) => {
        const limit = reqText(r.limitUsd);
        if (limit !== null) checkLimitUsd(limit);
      },
    },
  }),
};
