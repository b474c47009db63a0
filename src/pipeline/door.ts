import { asGatewayError, GatewayError } from '../core/errors.ts';
import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';
import { authenticate as findKey } from './auth.ts';
import { authenticate, type InternalCaller } from './authenticate.ts';
import { type Outcome, openContext, type RequestContext, type RequestIds } from './context.ts';
import { NO_POLICIES, type PipelineDeps } from './deps.ts';
import { recordEntry } from './record.ts';
import { settle } from './settle.ts';

/**
 * The one door of every endpoint (inference, the small endpoints, MCP calls): open the request's
 * context, report its start, find the caller (with catch-up: read-your-writes), run the endpoint,
 * and finish the request exactly once — settle, report the finish, record. Whatever an endpoint
 * is, its requests give the observers the same events (a span, metrics, a record).
 */

export const noSnapshot = (): GatewayError =>
  new GatewayError({ kind: 'unavailable', message: 'The data plane has no configuration yet.' });

/** settle → finish → record (to the request's observers), once per request. */
export const finish = (deps: PipelineDeps, ctx: RequestContext, outcome: Outcome): void => {
  if (ctx.finished) return;
  ctx.finished = true;
  const s = settle((deps.policies ?? NO_POLICIES).settle, ctx, outcome);
  const observers = ctx.observers;
  observers.finish(ctx, outcome, s);
  if (observers.wantsRecord) observers.record(ctx, recordEntry(deps.recordBodies, ctx, outcome, s));
};

/** Errors a configuration change committed moments ago may cure: an unknown caller, a model not there yet. */
const CURABLE = new Set(['authentication', 'permission', 'model_not_found', 'model_not_routed']);

/**
 * The snapshot to look the request up in once more, after the plane caught up with a change
 * committed moments ago (PipelineDeps.catchUp); rethrows `e` when it is not curable, when there
 * is nothing to catch up with or nothing moved.
 */
const caughtUp = async (deps: PipelineDeps, e: unknown, curable: boolean): Promise<ConfigSnapshot> => {
  if (!curable || !deps.catchUp || !(await deps.catchUp())) throw e;
  const now = deps.snapshots.current;
  if (!now) throw e;
  return now;
};

const isCurable = (e: unknown): boolean => e instanceof GatewayError && CURABLE.has(e.kind);

/** What an endpoint's `run` gets besides the context. */
export interface Door {
  /** The caller (also `ctx.key`). */
  readonly key: KeySnapshot;
  /** The snapshot the caller was found in: the request is served on it. */
  readonly snapshot: ConfigSnapshot;
  /**
   * After a later stage failed with an error a change committed moments ago may cure (a model
   * not routed yet): catches up, finds the caller again and gives the snapshot to look in once
   * more; rethrows `e` when there is nothing to catch up with. `curable` overrides the door's own
   * judgement of `e` (an MCP profile not found yet).
   */
  again(e: unknown, curable?: boolean): Promise<ConfigSnapshot>;
  /**
   * The endpoint finishes the request itself (a stream: when it ends; an answer with its usage):
   * gives the finish function. Otherwise the door finishes the request with the answer's status.
   */
  own(): (outcome: Outcome) => void;
}

/** How a request arrived: what the door opens the context with. */
export interface Arrival {
  /** The endpoint as records, spans and metrics name it (ids as `{id}`). */
  path: string;
  ids: RequestIds;
  headers: Headers;
  method: string;
  /** The caller, when the gateway makes the request for one (a batch line, an MCP call). */
  as?: InternalCaller;
  /** Fills in what is known before the start is reported (an MCP call's method and server). */
  opened?(ctx: RequestContext): void;
}

/** What the door makes of an endpoint's answer, or of an error thrown by a stage or the endpoint. */
export interface Answers<R> {
  status(answer: R): number;
  fail(error: GatewayError, thrown: unknown): R;
}

class Entered implements Door {
  owned = false;
  constructor(
    private readonly deps: PipelineDeps,
    private readonly ctx: RequestContext,
    private readonly a: Arrival,
    public snapshot: ConfigSnapshot,
    public key: KeySnapshot,
  ) {}
  async again(e: unknown, curable = isCurable(e)): Promise<ConfigSnapshot> {
    const snapshot = await caughtUp(this.deps, e, curable);
    this.key = await authenticate(this.ctx, this.a.headers, snapshot, this.a.as);
    this.snapshot = snapshot;
    return snapshot;
  }
  own(): (outcome: Outcome) => void {
    this.owned = true;
    return (outcome) => finish(this.deps, this.ctx, outcome);
  }
}

/** The door for any answer type (an MCP call answers with its result); HTTP endpoints use `withCaller`. */
export const enter = async <R>(
  deps: PipelineDeps,
  a: Arrival,
  run: (ctx: RequestContext, door: Door) => Promise<R>,
  answers: Answers<R>,
): Promise<R> => {
  const ctx = openContext(a.path, a.ids, deps.observers, a.method);
  ctx.headers = a.headers;
  if (deps.breakers) ctx.breakers = deps.breakers;
  a.opened?.(ctx);
  deps.observers.start(ctx);
  try {
    let snapshot = deps.snapshots.current;
    if (!snapshot) throw noSnapshot();
    let key: KeySnapshot | Promise<KeySnapshot>;
    try {
      key = authenticate(ctx, a.headers, snapshot, a.as);
      if (key instanceof Promise) key = await key;
    } catch (e) {
      snapshot = await caughtUp(deps, e, isCurable(e));
      key = await authenticate(ctx, a.headers, snapshot, a.as);
    }
    const door = new Entered(deps, ctx, a, snapshot, key);
    const answer = await run(ctx, door);
    if (!door.owned) finish(deps, ctx, { status: answers.status(answer) });
    return answer;
  } catch (e) {
    const err = asGatewayError(e);
    finish(deps, ctx, { status: err.status, error: err });
    return answers.fail(err, e);
  }
};

/**
 * The caller as the door finds it (the served snapshot, once more after a catch-up), for the MCP
 * transport (`/mcp/{profileId}`): its requests carry the MCP calls, and each governed call enters
 * through the door itself (mcp/govern.ts). `look` finds what the request needs besides the caller
 * (the MCP profile); `cures` names its errors a catch-up may cure too.
 */
export const callerOf = async <T>(
  deps: PipelineDeps,
  headers: Headers,
  look: (key: KeySnapshot, snapshot: ConfigSnapshot) => T,
  cures?: (e: GatewayError) => boolean,
): Promise<T> => {
  const attempt = async (snapshot: ConfigSnapshot): Promise<T> => look(await findKey(headers, snapshot, Date.now()), snapshot);
  const snapshot = deps.snapshots.current;
  if (!snapshot) throw noSnapshot();
  try {
    return await attempt(snapshot);
  } catch (e) {
    return attempt(await caughtUp(deps, e, isCurable(e) || (e instanceof GatewayError && cures?.(e) === true)));
  }
};

const statusOf = (res: Response): number => res.status;

/**
 * The door of an HTTP endpoint: `run` answers once the caller is known (`door.key`); an error
 * thrown by it or by the door is finished and answered by `fail` (in the endpoint's format).
 *
 * @example
 * const handleModels = (deps: PipelineDeps, req: Request, ids: RequestIds) =>
 *   withCaller(deps, '/v1/models', req, ids, async (_ctx, door) => jsonResponse(200, door.key.project.modelListJson, ids), (e) => errorResponse(e, ids));
 */
export const withCaller = (
  deps: PipelineDeps,
  path: string,
  req: Request,
  ids: RequestIds,
  run: (ctx: RequestContext, door: Door) => Promise<Response>,
  fail: (error: GatewayError, thrown: unknown) => Response,
  as?: InternalCaller,
): Promise<Response> =>
  enter(deps, { path, ids, headers: req.headers, method: req.method, ...(as ? { as } : {}) }, run, { status: statusOf, fail });
