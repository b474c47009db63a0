import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';
import { authenticate as findCaller } from './auth.ts';
import type { RequestContext } from './context.ts';

/**
 * Who calls, when the request was not received from a client but made by the gateway for one (a
 * batch line, contract §11; an MCP call of a caller already known): looked up in the snapshot the
 * request is served on; throws GatewayError (401) when the caller is gone (a revoked key, a
 * deleted project).
 */
export type InternalCaller = (snapshot: ConfigSnapshot) => KeySnapshot;

/**
 * The authenticate stage: who is calling, from the snapshot only (API key, or a user token), or
 * the internal caller's lookup; sets `ctx.key`. API keys are resolved synchronously (no await on the hot path);
 * user tokens need a signature check.
 */
export const authenticate = (
  ctx: RequestContext,
  headers: Headers,
  snapshot: ConfigSnapshot,
  as?: InternalCaller,
): KeySnapshot | Promise<KeySnapshot> => {
  if (as) {
    ctx.key = as(snapshot);
    return ctx.key;
  }
  const key = findCaller(headers, snapshot, ctx.receivedAt);
  if (!(key instanceof Promise)) {
    ctx.key = key;
    return key;
  }
  return key.then((k) => (ctx.key = k));
};
