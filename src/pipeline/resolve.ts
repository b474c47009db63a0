import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';
import { type Plan, resolve as resolvePlan } from './plan.ts';
import type { RequestContext } from './context.ts';

/** The resolve stage: which route serves the model for this caller (or the seed's named error). */
export const resolve = (ctx: RequestContext, snapshot: ConfigSnapshot, key: KeySnapshot, model: string, stream: boolean): Plan => {
  ctx.model = model;
  ctx.stream = stream;
  const plan = resolvePlan(snapshot, key, model);
  ctx.plan = plan;
  return plan;
};
