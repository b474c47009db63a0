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
const capParam = (r: CanonicalRequest): string => r.maxTokensParam ?? 'max_tokens';

/** The table's budgets, largest first. */
const BUDGETS_DOWN = [...new Set(Object.values(THINKING_BUDGET))].sort((a, b) => b - a);

/**
 * The thinking budget for a family that counts thinking inside its output limit (Anthropic
 * `max_tokens`, Gemini `maxOutputTokens`) when the client set that limit (`maxTokens`): the
 * client's cap bounds thinking and answer together, so the budget must be below it.
 * - A budget the client gave (Messages `thinking.budget_tokens`) is kept; below the cap is the
 *   client's own rule (its decoder checks it), so one at or above it — the cap clamped to the
 *   model's output limit — is refused naming it.
 * - An effort's budget by the table is lowered, when not below the cap, to the largest budget of
 *   the table that is (the effort lowered: the answer keeps the rest); below the table's smallest,
 *   to `cap − 1` where the family takes budgets that small (`min`); else the request is refused
 *   with a 400 naming the effort and the cap — thinking is never dropped silently.
 */
export const thinkingBudgetWithin = (r: CanonicalRequest, cap: number, family: string, min: number): number | undefined => {
  if (r.reasoningBudget !== undefined) {
    if (r.reasoningBudget < cap) return r.reasoningBudget;
    throw invalidRequest(
      `'${param(r)}' (${r.reasoningBudget}) must be below '${capParam(r)}' (${cap}, the model's output limit): thinking counts inside it.`,
      param(r),
    );
  }
  const effort = r.reasoningEffort;
  if (effort === undefined) return undefined;
  const fits = BUDGETS_DOWN.find((b) => b <= THINKING_BUDGET[effort] && b < cap);
  if (fits !== undefined) return fits;
  if (cap - 1 >= min) return cap - 1;
  throw invalidRequest(
    `'${param(r)}' cannot be honoured within '${capParam(r)}' (${cap}) by the ${family} upstream this model is routed to: its smallest thinking budget is ${min} token${min === 1 ? '' : 's'} and must be below the output limit, which '${capParam(r)}' bounds (thinking and answer together). Raise '${capParam(r)}' above ${min}, or remove '${param(r)}'.`,
    param(r),
  );
};

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
  throw invalidRequest(
    `'${param(r)}' cannot be honoured by the ${family} upstream this model is routed to: the gateway does not map reasoning settings to it.`,
    param(r),
  );
};
