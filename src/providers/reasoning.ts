/**
 * Reasoning settings across families (docs/client-compatibility.md, "What each family honours, maps or
 * refuses"). A client asks for reasoning with an effort (Chat `reasoning_effort`, Responses
 * `reasoning.effort`, Messages `output_config.effort`) or a token budget (Messages
 * `thinking.budget_tokens`); each family gets the form it takes, through one table.
 */
import type { CanonicalRequest } from '../canonical/types.ts';
import { invalidRequest } from '../core/errors.ts';

export type ReasoningEffort = NonNullable<CanonicalRequest['reasoningEffort']>;

/** Anthropic's smallest thinking budget (it refuses less). */
export const MIN_THINKING_BUDGET = 1024;

/**
 * Effort → thinking budget (Anthropic `thinking.budget_tokens`, Gemini `thinkingBudget`): Google's
 * own OpenAI-compatibility mapping, with Anthropic's minimum for `minimal` and `low`.
 */
export const THINKING_BUDGET: Readonly<Record<ReasoningEffort, number>> = {
  minimal: MIN_THINKING_BUDGET,
  low: MIN_THINKING_BUDGET,
  medium: 8192,
  high: 24576,
};

/** Budget → effort (OpenAI `reasoning_effort`): the largest effort whose budget the given one reaches; `low` below `medium`'s. */
export const effortForBudget = (budget: number): 'low' | 'medium' | 'high' =>
  budget >= THINKING_BUDGET.high ? 'high' : budget >= THINKING_BUDGET.medium ? 'medium' : 'low';

export const wantsReasoning = (r: CanonicalRequest): boolean => r.reasoningEffort !== undefined || r.reasoningBudget !== undefined;

/** The thinking budget for families that take one: the client's own budget, else the effort's. */
export const thinkingBudgetOf = (r: CanonicalRequest): number | undefined =>
  r.reasoningBudget ?? (r.reasoningEffort !== undefined ? THINKING_BUDGET[r.reasoningEffort] : undefined);

/** The effort for families that take one: the client's own effort, else the budget's. */
export const reasoningEffortOf = (r: CanonicalRequest): ReasoningEffort | undefined =>
  r.reasoningEffort ?? (r.reasoningBudget !== undefined ? effortForBudget(r.reasoningBudget) : undefined);

const param = (r: CanonicalRequest): string => r.reasoningParam ?? 'reasoning_effort';

/**
 * A translated request asking for reasoning of a model whose catalog entry lacks the `reasoning`
 * capability is refused (the setting would otherwise be dropped or refused upstream less clearly).
 */
export const assertModelReasons = (r: CanonicalRequest): void => {
  if (!wantsReasoning(r) || r.modelReasons !== false) return;
  throw invalidRequest(
    `The model '${r.model}' does not reason (its catalog entry has no 'reasoning' capability), so '${param(r)}' cannot be honoured; remove it or use a reasoning model.`,
    param(r),
  );
};

/** For families the gateway cannot ask for reasoning: a clear 400 naming the client's member. */
export const refuseReasoning = (r: CanonicalRequest, family: string): void => {
  if (!wantsReasoning(r)) return;
  throw invalidRequest(`'${param(r)}' cannot be honoured by the ${family} upstream this model is routed to: the gateway does not map reasoning settings to it.`, param(r));
};
