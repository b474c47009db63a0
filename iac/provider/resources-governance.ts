import type { ResourceDef } from './resource.ts';
import { str } from './resource.ts';
import { keyed } from './resources.ts';
import { computed, field } from './schema.ts';

/**
 * gateway_budget and gateway_guardrail (contract §3.2), keyed by (customer_id, project_id, name):
 * import ids `acme/web/<name>`. Write decimal limits canonically ("25", "0.5"): the server answers
 * them so, and another spelling would show as a diff.
 */

const B = 'UpsertBudget';
export const budget: ResourceDef = keyed({
  type: 'gateway_budget',
  description: 'A spend budget of a project (or of one of its API keys) over a day, week, month or in total.',
  create: B,
  get: 'GetBudget',
  update: B,
  del: 'DeleteBudget',
  envelope: 'budget',
  keys: [field(B, 'customerId'), field(B, 'projectId'), field(B, 'name')],
  fields: [
    field(B, 'apiKeyId', { update: B }),
    field(B, 'limitUsd', { update: B }),
    field(B, 'period', { update: B }),
    computed('spent_usd', 'spentUsd', 'string', 'spend in the current period (decimal USD, reservations in flight included)', { volatile: true }),
    computed('resets_at', 'resetsAt', 'string', 'RFC 3339; empty for a total budget', { volatile: true }),
  ],
});
// UpsertBudget replaces the budget: every field goes with each update.
budget.amend = (body, prior, plan) => {
  if (!prior) return;
  body.limitUsd = str(plan.limit_usd);
  body.period = str(plan.period);
  if (str(plan.api_key_id) !== '') body.apiKeyId = str(plan.api_key_id);
};

const G = 'CreateGuardrail';
const GU = 'UpdateGuardrail';
export const guardrail: ResourceDef = keyed({
  type: 'gateway_guardrail',
  description: 'A guardrail of a project: regex, PII or maximum input tokens; block, redact or flag; on input, output or both.',
  create: G,
  get: 'GetGuardrail',
  update: GU,
  del: 'DeleteGuardrail',
  envelope: 'guardrail',
  keys: [field(G, 'customerId'), field(G, 'projectId'), field(G, 'name')],
  fields: [field(G, 'stage', { update: GU }), field(G, 'kind', { update: GU }), field(G, 'pattern', { update: GU }), field(G, 'piiTypes', { update: GU }), field(G, 'maxTokens', { update: GU }), field(G, 'action', { update: GU })],
});
