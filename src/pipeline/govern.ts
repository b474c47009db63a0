import { admit } from './admit.ts';
import type { RequestContext } from './context.ts';
import type { Policies } from './deps.ts';
import { type Inspected, inspectInput, type OutputFilter, openOutput } from './guardrails.ts';

/**
 * The governed stages, in one order for every endpoint that admits requests (the inference
 * pipeline, index.ts, and the governed MCP calls, mcp/govern.ts): input guardrails on what is sent
 * (they may redact it), then admission (limits, budgets), then the request's output filter.
 */

const admitAfter = (policies: Policies, ctx: RequestContext, inspected: Inspected): Inspected | Promise<Inspected> => {
  if (policies.admit.length === 0) return inspected;
  const admitting = admit(policies.admit, ctx);
  return admitting ? admitting.then(() => inspected) : inspected;
};

/**
 * Input guardrails on `body`, then the admission policies; throws the refusal. `redacted` is told
 * of a body a guardrail replaced before admission runs (admission reads what is sent). Returns a
 * promise only once a stage answers with one (a request no policy concerns costs no await).
 */
export const admitted = (
  policies: Policies,
  ctx: RequestContext,
  body: unknown,
  redacted: (body: unknown) => void,
): Inspected | Promise<Inspected> => {
  if (policies.input.length === 0) return admitAfter(policies, ctx, { body, changed: false });
  const inspecting = inspectInput(policies.input, ctx, body);
  const then = (i: Inspected): Inspected | Promise<Inspected> => {
    if (i.changed) redacted(i.body);
    return admitAfter(policies, ctx, i);
  };
  return inspecting instanceof Promise ? inspecting.then(then) : then(inspecting);
};

/** The request's output filter, when an output guardrail applies to it. */
export const outputOf = (policies: Policies, ctx: RequestContext): OutputFilter | undefined =>
  policies.guardrails.length > 0 ? openOutput(policies.guardrails, ctx) : undefined;
