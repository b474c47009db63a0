import type { ConfigSnapshot } from '../propagation/snapshot.ts';
import { authenticate as findCaller } from '../data-plane/auth.ts';
import type { RequestContext } from './context.ts';

/**
 * The authenticate stage: who is calling, from the snapshot only (API key, or a user token).
 * API keys are resolved synchronously (no await on the hot path); user tokens need a signature check.
 */
export const authenticate = (ctx: RequestContext, req: Request, snapshot: ConfigSnapshot): void | Promise<void> => {
  const key = findCaller(req.headers, snapshot, ctx.receivedAt);
  if (!(key instanceof Promise)) {
    ctx.key = key;
    return;
  }
  return key.then((k) => {
    ctx.key = k;
  });
};
