import type { Counters } from '../../governance/counters.ts';
import type { Policies } from '../../pipeline/deps.ts';
import { providerInputGuardrail, providerOutputGuardrail } from './guardrail-providers.ts';
import { inputGuardrail, outputGuardrail } from './guardrails.ts';
import { limitsPolicies, type OnCounterError } from './limits.ts';

/**
 * The governance policies of the request path (contract §3.2), the same for every endpoint:
 * input guardrails (built-in, then provider guardrails of contract §15) → limits (rate limits and budgets, one atomic reservation) → output guardrails
 * → settlement of the reservations. Each reads its configuration from the request's project in
 * the snapshot, so a project without governance pays one map lookup per policy.
 */
export const governancePolicies = (counters: Counters, onError: OnCounterError): Policies => {
  const limits = limitsPolicies({ counters, onError });
  return Object.freeze({
    input: [inputGuardrail, providerInputGuardrail],
    admit: [limits.admit],
    guardrails: [outputGuardrail, providerOutputGuardrail],
    settle: [limits.settle],
  });
};
