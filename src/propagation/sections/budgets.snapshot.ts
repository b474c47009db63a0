import type { BudgetPeriod } from '../../governance/periods.ts';
import { budgetsGovernance } from '../governance.ts';
import { perProject, rowsOf, type SnapshotBuilder } from '../section.ts';

export interface BudgetSnapshot {
  id: string;
  name: string;
  /** null: the whole project. */
  apiKeyId: string | null;
  limitNanoUsd: number;
  period: BudgetPeriod;
}

const budgetRows = rowsOf((doc) => doc.budgets);

/** A project's spend budgets (contract §3.2). */
export const budgetsSnapshot = {
  project: perProject((p): { budgets: readonly BudgetSnapshot[] } => ({ budgets: budgetsGovernance(budgetRows(p)) })),
} satisfies SnapshotBuilder;
