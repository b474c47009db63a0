import type { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { InternalCaller } from './authenticate.ts';
import { readJsonBody } from './body.ts';
import type { Outcome, Plan, RequestContext, RequestIds } from './context.ts';
import { NO_POLICIES, type PipelineDeps, type Policies } from './deps.ts';
import { withCaller } from './door.ts';
import { admitted, outputOf } from './govern.ts';
import type { OutputFilter } from './guardrails.ts';
import { resolve } from './resolve.ts';

/**
 * The request pipeline: the floor every endpoint stands on. It imports nothing above it (core,
 * canonical, config, governance, propagation types); the endpoints (src/data-plane, src/mcp) are
 * short specs over it.
 *
 * Every request of every endpoint enters through one door (door.ts `withCaller`): open the
 * context, find the caller (read-your-writes), run the endpoint, finish exactly once — settle,
 * observe, record. An inference endpoint's request runs these named stages behind the door:
 *
 *   authenticate → resolve → input guardrails → admit → dispatch → output guardrails → settle → record
 *
 * `runPipeline` reads the body, resolves the route and runs the governed stages (govern.ts); the
 * endpoint's `serve` dispatches and responds (output guardrails apply to what it is about to
 * send); `finish` settles and records exactly once — at once for a JSON answer or an error, when
 * the stream ended for a stream. Each stage is reported to the observers (observe.ts: tracing,
 * metrics, records) and to nothing else.
 */

export type { InternalCaller } from './authenticate.ts';
export type { Attempt, Outcome, Plan, RequestContext, RequestIds } from './context.ts';
export type { PipelineDeps, Policies } from './deps.ts';
export { type Arrival, type Door, callerOf, enter, finish, noSnapshot, withCaller } from './door.ts';

/** What an endpoint makes of a parsed body. Throws GatewayError (400) when it is not a valid request. */
export interface ReadRequest<T> {
  request: T;
  model: string;
  stream: boolean;
  /**
   * The output cap the request sets, in whichever member its format names it (Gemini
   * `generationConfig.maxOutputTokens`, Converse `inferenceConfig.maxTokens`…): what limits reserve.
   * Without it, the body's `max_completion_tokens`, `max_tokens` or `max_output_tokens`.
   */
  maxOutputTokens?: number | undefined;
  /** The request's temperature, in whichever member its format names it; without it, the body's `temperature`. */
  temperature?: number | undefined;
}

/** Everything `serve` needs: the resolved request, the endpoint's own state, and the way to finish it. */
export interface Serving<T, S = undefined, D extends PipelineDeps = PipelineDeps> {
  deps: D;
  ctx: RequestContext;
  request: T;
  /** The parsed body as the client sent it (for same-format pass-through). */
  body: unknown;
  plan: Plan;
  /** What the endpoint's `prepare` made (stored conversation state, hosted tools…), when it has one. */
  state?: S;
  policies: Policies;
  /** The request's output guardrails, when any applies (then no same-format pass-through). */
  output: OutputFilter | undefined;
  signal: AbortSignal;
  /** Settle and report finish and record to the observers (once; later calls are ignored). */
  finish(outcome: Outcome): void;
}

/** An inference endpoint: `T` its request, `S` its own state (made by `prepare`), `D` the dependencies it needs. */
export interface EndpointSpec<T, S = undefined, D extends PipelineDeps = PipelineDeps> {
  /** The path as records and spans name it. */
  path: string;
  /**
   * Before `read`: resolves server-side state into the body (stored responses, threads) once the
   * caller is known. Throws GatewayError (404 for an unknown reference).
   */
  prepare?(body: unknown, ctx: RequestContext, deps: D): Promise<{ body: unknown; state?: S }>;
  read(body: unknown): ReadRequest<T>;
  /** Dispatch and respond. A thrown error is finished and answered by the pipeline. */
  serve(s: Serving<T, S, D>): Promise<Response>;
  /** The error answer in the endpoint's format. */
  fail(error: GatewayError, ids: RequestIds): Response;
  /** Called once when the request is finished (answered or not), with what `prepare` made. */
  release?(state: S): void;
}

/** The request's `temperature`, when a finite number. */
const temperatureOf = (body: unknown): number | undefined => {
  const v = isRecord(body) ? body.temperature : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

/** max_tokens, max_completion_tokens or max_output_tokens of a request body, when a positive integer. */
const maxOutputOf = (body: unknown): number | undefined => {
  if (!isRecord(body)) return undefined;
  for (const k of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const v = body[k];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  }
  return undefined;
};

/** One inference request through the door and the stages, served by `spec`. */
export const runPipeline = <T, S, D extends PipelineDeps>(
  deps: D,
  spec: EndpointSpec<T, S, D>,
  req: Request,
  ids: RequestIds,
  as?: InternalCaller,
): Promise<Response> =>
  withCaller(
    deps,
    spec.path,
    req,
    ids,
    async (ctx, door) => {
      const policies = deps.policies ?? NO_POLICIES;
      let state: S | undefined;
      try {
        const body = await readJsonBody(req, deps.bodyLimits);
        ctx.bodyText = body.text;
        const prepared = spec.prepare ? await spec.prepare(body.value, ctx, deps) : undefined;
        state = prepared?.state;
        let value = prepared ? prepared.body : body.value;
        let read = spec.read(value);
        let plan: Plan;
        try {
          plan = resolve(ctx, door.snapshot, door.key, read.model, read.stream);
        } catch (e) {
          const snapshot = await door.again(e);
          plan = resolve(ctx, snapshot, door.key, read.model, read.stream);
        }
        ctx.maxOutputTokens = read.maxOutputTokens ?? maxOutputOf(value);
        ctx.temperature = read.temperature ?? temperatureOf(value);
        const admitting = admitted(policies, ctx, value, (redacted) => {
          // Redacted: the upstream and the record see the redacted body only.
          value = redacted;
          read = spec.read(redacted);
          ctx.bodyText = JSON.stringify(redacted);
        });
        if (admitting instanceof Promise) await admitting;
        const output = outputOf(policies, ctx);
        const finishing = door.own();
        const kept = state;
        const done = (o: Outcome): void => {
          if (ctx.finished) return;
          finishing(o);
          // Once per request. The answer's keep() (if any) is called in the same tick, right after.
          if (kept !== undefined) spec.release?.(kept);
        };
        return await spec.serve({
          deps,
          ctx,
          request: read.request,
          body: value,
          plan,
          ...(kept !== undefined ? { state: kept } : {}),
          policies,
          output,
          signal: req.signal,
          finish: done,
        });
      } catch (e) {
        if (!ctx.finished && state !== undefined) spec.release?.(state);
        throw e;
      }
    },
    (err) => spec.fail(err, ids),
    as,
  );
