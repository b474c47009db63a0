import type { GatewayError } from '../../core/errors.ts';
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

/** Runs the admission policies; throws the first refusal. */
export const admit = async (policies: readonly AdmissionPolicy[], ctx: RequestContext): Promise<void> => {
  for (const p of policies) {
    const verdict = p.admit(ctx);
    const refusal = verdict instanceof Promise ? await verdict : verdict;
    if (refusal) throw refusal;
  }
};
