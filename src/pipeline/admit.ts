import type { GatewayError } from '../core/errors.ts';
import type { RequestContext } from './context.ts';

/**
 * Admission: after the caller is known and the model resolved, before anything is sent upstream.
 * A policy refuses a request by returning the error the client gets (e.g. 429 with retry-after);
 * a refused request is settled and recorded like any other failure. Policies run in order; the
 * first refusal wins. Synchronous policies cost no extra await.
 */
export interface AdmissionPolicy {
  readonly name: string;
  /** `ctx.key`, `ctx.model` and `ctx.plan` are set. */
  admit(ctx: Readonly<RequestContext>): GatewayError | undefined | Promise<GatewayError | undefined>;
}

/**
 * Runs the admission policies; throws the first refusal. Returns a promise only once a policy
 * answers with one (a project without limits, or a lease that covers the request, costs no await).
 */
export const admit = (policies: readonly AdmissionPolicy[], ctx: RequestContext, from = 0): void | Promise<void> => {
  for (let i = from; i < policies.length; i++) {
    const policy = policies[i];
    if (!policy) continue;
    const verdict = policy.admit(ctx);
    if (verdict instanceof Promise)
      return verdict.then((refusal) => {
        if (refusal) throw refusal;
        return admit(policies, ctx, i + 1);
      });
    if (verdict) throw verdict;
  }
  return undefined;
};
