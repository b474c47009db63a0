import type { GuardrailRule } from '../../governance/guardrail-scan.ts';
import { guardrailsGovernance } from '../governance.ts';
import { perProject, rowsOf, type SnapshotBuilder } from '../section.ts';

export interface GuardrailsPart {
  /** Guardrails by the stage they apply to (a `both` rule is in both lists), ordered by name. */
  guardrails: { input: readonly GuardrailRule[]; output: readonly GuardrailRule[] };
}

const guardrailRows = rowsOf((doc) => doc.guardrails);

/** A project's guardrails (contract §3.2), compiled once per revision (governance.ts). */
export const guardrailsSnapshot = {
  project: perProject((p): GuardrailsPart => ({ guardrails: guardrailsGovernance(guardrailRows(p)) })),
} satisfies SnapshotBuilder;
