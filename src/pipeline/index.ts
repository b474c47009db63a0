import { asGatewayError, GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';
import type { HostedMcp } from '../data-plane/hosted-mcp/prepare.ts';
import type { Plan } from '../data-plane/resolve.ts';
import type { Keeper, Prepared } from '../data-plane/stateful.ts';
import type { RequestIds } from '../data-plane/respond.ts';
import { admit } from './admit.ts';
import { authenticate } from './authenticate.ts';
import { readJsonBody } from './body.ts';
import { type InferenceDeps, NO_POLICIES, type Outcome, openContext, type Policies, type RequestContext } from './context.ts';
import { inspectInput, openOutput, type OutputFilter } from './guardrails.ts';
import { recordEntry } from './record.ts';
import { resolve } from './resolve.ts';
import { settle } from './settle.ts';

/**
 * The request path of every inference endpoint, as named stages:
 *
 *   authenticate → resolve → admit → dispatch → output guardrails → settle → record
 *
 * The pipeline runs authenticate (auth.ts via ./authenticate.ts), reads the body, resolves the
 * route and runs admission; the endpoint's `serve` dispatches and responds (output guardrails
 * apply to what it is about to send); `finish` settles and records exactly once — at once for a
 * JSON answer or an error, when the stream ended for a stream. Each stage is reported to the
 * observers (./observe.ts: tracing, metrics, records) and to nothing else.
 */

export type { InferenceDeps, Outcome, Policies, RequestContext } from './context.ts';

/** What an endpoint makes of a parsed body. Throws GatewayError (400) when it is not a valid request. */
export interface ReadRequest<T> {
  request: T;
  model: string;
  stream: boolean;
}

/** Everything `serve` needs: the resolved request and the way to finish it. */
export interface Serving<T> {
  deps: InferenceDeps;
  ctx: RequestContext;
  request: T;
  /** The parsed body as the client sent it (for same-format pass-through). */
  body: unknown;
  plan: Plan;
  /** Keeps the answer (stored Responses, Messages threads), when the request asked for it. */
  keeper: Keeper | undefined;
  /** Responses `mcp` tools the gateway runs itself, when the request has any. */
  hosted?: HostedMcp;
  /** Responses `background: true`: run by the gateway, answered at once (data-plane/background.ts). */
  background?: boolean;
  policies: Policies;
  /** The request's output guardrails, when any applies (then no same-format pass-through). */
  output: OutputFilter | undefined;
  signal: AbortSignal;
  /** Settle and report finish and record to the observers (once; later calls are ignored). */
  finish(outcome: Outcome): void;
}

export interface EndpointSpec<T> {
  /** The path as records and spans name it. */
  path: string;
  /**
   * Before `read`: resolves server-side conversation state into the body (stored responses,
   * threads) once the caller is known. Throws GatewayError (404 for an unknown reference).
   */
  prepare?(body: unknown, ctx: RequestContext, deps: InferenceDeps): Promise<Prepared>;
  read(body: unknown): ReadRequest<T>;
  /** Dispatch and respond. A thrown error is finished and answered by the pipeline. */
  serve(s: Serving<T>): Promise<Response>;
  /** The error answer in the endpoint's format. */
  fail(error: GatewayError, ids: RequestIds): Response;
}

export const noSnapshot = (): GatewayError => new GatewayError({ kind: 'unavailable', message: 'The data plane has no configuration yet.' });

/** settle → finish → record (to the request's observers), once per request. */
export const finish = (deps: InferenceDeps, ctx: RequestContext, outcome: Outcome): void => {
  if (ctx.finished) return;
  ctx.finished = true;
  const s = settle((deps.policies ?? NO_POLICIES).settle, ctx, outcome);
  const observers = ctx.observers;
  observers.finish(ctx, outcome, s);
  if (observers.wantsRecord) observers.record(ctx, recordEntry(deps.recordBodies, ctx, outcome, s));
};

/** The request's `temperature`, when a finite number. */
const temperatureOf = (body: unknown): number | undefined => {
  const v = isRecord(body) ? body.temperature : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

/** max_tokens, max_completion_tokens or max_output_tokens of a request body, when a positive integer. */
const maxOutputOf = (body: unknown): number | undefined => {
  if (body === null || typeof body !== 'object') return undefined;
  const o = body as Record<string, unknown>;
  for (const k of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const v = o[k];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  }
  return undefined;
};

/** Errors a configuration change committed moments ago may cure: an unknown caller, a model not there yet. */
const CURABLE = new Set(['authentication', 'permission', 'model_not_found', 'model_not_routed']);

/**
 * The snapshot to look the request up in once more, after the plane caught up with a change
 * committed moments ago (InferenceDeps.catchUp); rethrows `e` when there is none or nothing moved.
 */
const caughtUp = async (deps: InferenceDeps, e: unknown): Promise<ConfigSnapshot> => {
  if (!(e instanceof GatewayError) || !CURABLE.has(e.kind) || !deps.catchUp || !(await deps.catchUp())) throw e;
  const now = deps.snapshots.current;
  if (!now) throw e;
  return now;
};

/**
 * Who calls, when the request was not received from a client but made by the gateway for one (a
 * batch line, contract §11): looked up in the snapshot the request is served on; throws
 * GatewayError (401) when the caller is gone (a revoked key, a deleted project).
 */
export type InternalCaller = (snapshot: ConfigSnapshot) => KeySnapshot;

/** The authenticate stage, or the internal caller's lookup. */
const authenticateOrAs = (ctx: RequestContext, req: Request, snapshot: ConfigSnapshot, as: InternalCaller | undefined): void | Promise<void> => {
  if (!as) return authenticate(ctx, req, snapshot);
  ctx.key = as(snapshot);
};

export const runPipeline = async <T>(deps: InferenceDeps, spec: EndpointSpec<T>, req: Request, ids: RequestIds, as?: InternalCaller): Promise<Response> => {
  const ctx = openContext(spec.path, ids, deps.observers);
  ctx.headers = req.headers;
  deps.observers.start(ctx);
  const policies = deps.policies ?? NO_POLICIES;
  let keeper: Keeper | undefined;
  try {
    let snapshot = deps.snapshots.current;
    if (!snapshot) throw noSnapshot();
    try {
      const authed = authenticateOrAs(ctx, req, snapshot, as);
      if (authed) await authed;
    } catch (e) {
      snapshot = await caughtUp(deps, e);
      const authed = authenticateOrAs(ctx, req, snapshot, as);
      if (authed) await authed;
    }
    const body = await readJsonBody(req, deps.bodyLimits);
    ctx.bodyText = body.text;
    const prepared: Prepared = spec.prepare ? await spec.prepare(body.value, ctx, deps) : { body: body.value };
    keeper = prepared.keeper;
    let value = prepared.body;
    let read = spec.read(value);
    let plan: Plan;
    try {
      plan = resolve(ctx, snapshot, read.model, read.stream);
    } catch (e) {
      snapshot = await caughtUp(deps, e);
      const authed = authenticateOrAs(ctx, req, snapshot, as);
      if (authed) await authed;
      plan = resolve(ctx, snapshot, read.model, read.stream);
    }
    ctx.maxOutputTokens = maxOutputOf(value);
    ctx.temperature = temperatureOf(value);
    if (policies.input.length > 0) {
      const inspecting = inspectInput(policies.input, ctx, value);
      const inspected = inspecting instanceof Promise ? await inspecting : inspecting;
      if (inspected.changed) {
        // Redacted: the upstream and the record see the redacted body only.
        value = inspected.body;
        read = spec.read(value);
        ctx.bodyText = JSON.stringify(value);
      }
    }
    if (policies.admit.length > 0) {
      const admitting = admit(policies.admit, ctx);
      if (admitting) await admitting;
    }
    const output = policies.guardrails.length > 0 ? openOutput(policies.guardrails, ctx) : undefined;
    const kept = keeper;
    const done = (o: Outcome): void => {
      if (ctx.finished) return;
      finish(deps, ctx, o);
      // Once per request. The answer's keep() (if any) is called in the same tick, right after.
      kept?.release?.();
    };
    return await spec.serve({ deps, ctx, request: read.request, body: value, plan, keeper: kept, ...(prepared.hosted ? { hosted: prepared.hosted } : {}), ...(prepared.background ? { background: true } : {}), policies, output, signal: req.signal, finish: done });
  } catch (e) {
    const err = asGatewayError(e);
    if (!ctx.finished) keeper?.release?.();
    finish(deps, ctx, { status: err.status, error: err });
    return spec.fail(err, ids);
  }
};
