import { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import { upstreamBounds } from '../core/upstream-bounds.ts';
import { idHeaders, markGatewayStream } from '../pipeline/answer.ts';
import { readJsonBody } from '../pipeline/body.ts';
import type { Attempt, RequestContext, RequestIds } from '../pipeline/context.ts';
import { NO_POLICIES, type PipelineDeps, type Policies } from '../pipeline/deps.ts';
import { admitted, outputOf } from '../pipeline/govern.ts';
import { callerOf, type Door, enter } from '../pipeline/index.ts';
import { CardError, checkAddress, gatewayCard } from './card.ts';
import type { A2aAgentConfig } from './config.ts';
import { isDrifted } from './pin.ts';
import { type A2aCall, type Binding, jsonRpcBinding } from './binding.ts';
import { restBinding } from './rest.ts';
import { idsOfResult, rpcErrorResponse, rpcRefusal, textParts, upstreamFailure } from './rpc.ts';
import { relayStream } from './stream.ts';

/**
 * `/a2a/{agentId}` on the inference listener (contract §12): an A2A agent of the caller's project
 * behind the pipeline's one door (pipeline/door.ts): the caller is authenticated, the message's text
 * parts go through the input guardrails, the project's limits admit it, the call goes to the
 * agent's JSON-RPC endpoint with the catalog's credential (never the caller's), `traceparent` and
 * `X-Gateway-Correlation-Id`, the answer's text parts go through the output guardrails, and the
 * request is recorded once (endpoint `/a2a/{agentId}`, `model` the method, `provider` `a2a`,
 * `connection` the agent, `upstream_model` the task id). Both bindings go through it: JSON-RPC
 * (`POST /a2a/{agentId}`, binding.ts) and HTTP+JSON (`/a2a/{agentId}/v1/…`, rest.ts); errors are
 * each binding's own error shape.
 */

const JSON_CT = 'application/json';
const CORRELATION = 'x-gateway-correlation-id';
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

const notServed = (agentId: string): GatewayError =>
  rpcRefusal(404, -32001, `A2A agent '${agentId}' is not assigned to the caller's project.`, 'a2a_agent_not_found');

const agentOf = async (door: Door, agentId: string): Promise<A2aAgentConfig> => {
  const found = door.key.project.a2aAgents.get(agentId);
  if (found) return found;
  await door.again(notServed(agentId), true);
  const again = door.key.project.a2aAgents.get(agentId);
  if (!again) throw notServed(agentId);
  return again;
};

const checkPin = async (a: A2aAgentConfig): Promise<void> => {
  const drifted = isDrifted(a);
  if (drifted instanceof Promise ? await drifted : drifted)
    throw rpcRefusal(
      503,
      -32603,
      `A2A agent '${a.agentId}' is not served: its agent card changed since it was pinned (RefreshA2aAgent pins it again).`,
      'a2a_agent_drifted',
    );
};

const withoutInput = (p: Policies): Policies => (p.input.length === 0 ? p : { ...p, input: [] });

/** Input guardrails on the message's text parts (redactions written back), then the project's limits. */
const admit = async (deps: PipelineDeps, ctx: RequestContext, call: A2aCall, binding: Binding): Promise<void> => {
  const parts = textParts(call.params.message);
  const policies = deps.policies ?? NO_POLICIES;
  const admitting = admitted(parts.length > 0 ? policies : withoutInput(policies), ctx, { texts: parts.map((p) => p.text) }, (r) => {
    if (!isRecord(r) || !Array.isArray(r.texts)) return;
    r.texts.forEach((t, i) => {
      const part = parts[i];
      if (part && typeof t === 'string') part.text = t;
    });
    ctx.bodyText = binding.bodyText(call);
  });
  if (admitting instanceof Promise) await admitting;
};

/** Output guardrails on the text parts of a result (or a streamed event), rewritten in place. */
export const guardOutput = async (policies: Policies, ctx: RequestContext, value: unknown): Promise<boolean> => {
  const output = outputOf(policies, ctx);
  const parts = textParts(value);
  if (!output || parts.length === 0) return false;
  const json = { texts: parts.map((p) => p.text) };
  const view = await output.answer({ kind: 'extra', json, contentType: JSON_CT });
  if (view.kind !== 'extra' || view.json === json || !isRecord(view.json) || !Array.isArray(view.json.texts)) return false;
  view.json.texts.forEach((t, i) => {
    const part = parts[i];
    if (part && typeof t === 'string') part.text = t;
  });
  return true;
};

const upstreamHeaders = (a: A2aAgentConfig, ctx: RequestContext, req: Request, stream: boolean, correlation: string): Headers => {
  const h = new Headers({ 'content-type': JSON_CT, accept: stream ? 'text/event-stream' : JSON_CT, [CORRELATION]: correlation });
  for (const name of ['a2a-version', 'a2a-extensions', 'x-a2a-extensions']) {
    const v = req.headers.get(name);
    if (v !== null) h.set(name, v);
  }
  // The request's trace: the tracing observer's span when tracing is on, else the client's context, else one named by the request id.
  const client = req.headers.get('traceparent');
  const own = ctx.ids.requestId.replaceAll('-', '');
  h.set('traceparent', client !== null && TRACEPARENT.test(client) ? client : `00-${own}-${own.slice(-16)}-00`);
  for (const [k, v] of Object.entries(ctx.upstreamHeaders ?? {})) h.set(k, v);
  if (a.authType === 'bearer' && a.authValue) h.set('authorization', `Bearer ${a.authValue}`);
  if (a.authType === 'header' && a.authHeader && a.authValue) h.set(a.authHeader, a.authValue);
  return h;
};

const readCapped = async (res: Response, agentId: string, signal: AbortSignal): Promise<string> => {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > upstreamBounds.a2aMaxMessageBytes) {
        reader.cancel().catch(() => undefined);
        throw upstreamFailure(agentId, 'garbage', ' (an answer larger than GATEWAY_A2A_MAX_MESSAGE)');
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw upstreamFailure(agentId, signal.aborted ? 'timeout' : 'network');
  }
  return Buffer.concat(chunks, total).toString('utf8');
};

/** Serves one JSON-RPC request to `/a2a/{agentId}`. */
export const serveA2a = (deps: PipelineDeps, req: Request, ids: RequestIds, agentId: string): Promise<Response> =>
  serveCall(deps, req, ids, agentId, jsonRpcBinding(), true);

/** Serves one HTTP+JSON request to `/a2a/{agentId}/v1/…`. */
export const serveA2aRest = (deps: PipelineDeps, req: Request, ids: RequestIds, agentId: string): Promise<Response> => {
  const url = new URL(req.url);
  const prefix = `/a2a/${url.pathname.split('/')[2] ?? ''}/v1`;
  const binding = restBinding(req.method === 'GET' ? 'GET' : 'POST', url.pathname.slice(prefix.length), url.search);
  return serveCall(deps, req, ids, agentId, binding, binding.hasBody);
};

const serveCall = (
  deps: PipelineDeps,
  req: Request,
  ids: RequestIds,
  agentId: string,
  binding: Binding,
  hasBody: boolean,
): Promise<Response> => {
  const correlation = (req.headers.get(CORRELATION) ?? '').slice(0, 128) || ids.requestId;
  const extra = { [CORRELATION]: correlation };
  return enter(
    deps,
    {
      path: `/a2a/${agentId}`,
      ids,
      headers: req.headers,
      method: req.method === 'GET' ? 'GET' : 'POST',
      opened: (ctx) => {
        ctx.agent = { id: agentId };
      },
    },
    async (ctx, door) => {
      ctx.correlationId = correlation;
      let value: unknown;
      if (hasBody) {
        const body = await readJsonBody(req, deps.bodyLimits);
        ctx.bodyText = body.text;
        value = body.value;
      }
      const a2a = binding.decode(value);
      ctx.model = a2a.method;
      ctx.stream = a2a.stream;
      const agent = await agentOf(door, agentId);
      ctx.agent = { id: agentId, name: agent.name };
      await checkPin(agent);
      if (binding.upstream(agent, a2a).url === undefined)
        throw new GatewayError({
          kind: 'unsupported_endpoint',
          message: `A2A agent '${agentId}' offers no HTTP+JSON interface (its card lists none); call it over JSON-RPC at /a2a/${agentId}.`,
        });
      await admit(deps, ctx, a2a, binding);
      return call(deps, ctx, door, req, agent, a2a, binding, correlation, extra);
    },
    { status: (r) => r.status, fail: (e) => binding.errorResponse(e, ids, extra) },
  );
};

const call = async (
  deps: PipelineDeps,
  ctx: RequestContext,
  door: Door,
  req: Request,
  agent: A2aAgentConfig,
  a2a: A2aCall,
  binding: Binding,
  correlation: string,
  extra: Record<string, string>,
): Promise<Response> => {
  const view = { target: { connection: { name: agent.agentId, provider: 'a2a' }, upstreamModel: agent.agentId } };
  const t0 = performance.now();
  const attempt = (status: number, taskId?: string, errorCode?: string): Attempt => ({
    connection: agent.agentId,
    provider: 'a2a',
    upstreamModel: taskId ?? agent.agentId,
    status,
    ms: Math.round(performance.now() - t0),
    ...(errorCode ? { errorCode } : {}),
  });
  const done = door.own();
  const failed = (e: GatewayError): never => {
    const a = attempt(e.status, undefined, e.errorCode);
    ctx.observers.attemptEnd(ctx, view, a, e);
    done({ status: e.status, error: e, attempts: [a] });
    throw e;
  };
  ctx.observers.attemptStart(ctx, view);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), upstreamBounds.a2aTimeoutMs);
  let res: Response;
  try {
    const up = binding.upstream(agent, a2a);
    const url = up.url ?? agent.rpcUrl;
    await checkAddress(url, agent.allowPrivate, up.url === agent.rpcUrl ? "the agent's JSON-RPC URL" : "the agent's HTTP+JSON URL");
    res = await fetch(url, {
      method: up.verb,
      headers: upstreamHeaders(agent, ctx, req, ctx.stream, correlation),
      ...(up.body !== undefined ? { body: up.body } : {}),
      redirect: 'manual',
      signal: abort.signal,
    });
  } catch (e) {
    clearTimeout(timer);
    if (e instanceof CardError)
      return failed(
        new GatewayError({
          kind: 'permission',
          errorCode: 'upstream_address_forbidden',
          message: `A2A agent '${agent.agentId}': ${e.message}.`,
        }),
      );
    return failed(upstreamFailure(agent.agentId, abort.signal.aborted ? 'timeout' : 'network'));
  }
  const policies = deps.policies ?? NO_POLICIES;
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream') && res.body) {
    clearTimeout(timer);
    const ttfbMs = Math.round(performance.now() - ctx.t0);
    const stream = relayStream(res.body, abort, {
      agentId: agent.agentId,
      binding,
      guard: (v) => guardOutput(policies, ctx, v),
      end: (outcome) => {
        const a = attempt(outcome.error ? outcome.error.status : 200, outcome.taskId, outcome.error?.errorCode);
        ctx.observers.attemptEnd(ctx, view, a, outcome.error);
        done({
          status: outcome.error ? outcome.error.status : 200,
          ttfbMs,
          attempts: [a],
          ...(outcome.error ? { error: outcome.error } : {}),
        });
        ctx.ids.streamEnded?.();
      },
    });
    return markGatewayStream(
      new Response(stream, {
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...idHeaders(ctx.ids), ...extra },
      }),
    );
  }
  let text: string;
  try {
    text = await readCapped(res, agent.agentId, abort.signal);
  } catch (e) {
    return failed(e instanceof GatewayError ? e : upstreamFailure(agent.agentId, 'network'));
  } finally {
    clearTimeout(timer);
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  const read = binding.answer(answer, res.status);
  if (!read) return failed(upstreamFailure(agent.agentId, 'garbage', ` (HTTP ${res.status})`));
  const { taskId, contextId } = idsOfResult(read.result);
  try {
    if ('result' in read && (await guardOutput(policies, ctx, read.result))) text = JSON.stringify(answer);
  } catch (e) {
    if (e instanceof GatewayError) return failed(e);
    throw e;
  }
  const a = attempt(res.status, taskId);
  ctx.observers.attemptEnd(ctx, view, a, undefined);
  done({ status: res.status, responseText: text, attempts: [a], ...(taskId ? { responseId: taskId } : {}) });
  return new Response(text, {
    status: res.status,
    headers: {
      'content-type': JSON_CT,
      ...idHeaders(ctx.ids),
      ...extra,
      ...(taskId ? { 'x-a2a-task-id': taskId } : {}),
      ...(contextId ? { 'x-a2a-context-id': contextId } : {}),
    },
  });
};

/** `GET /a2a/{agentId}/.well-known/agent-card.json`: the pinned card, rewritten to the gateway's URL and bearer. */
export const serveA2aCard = async (deps: PipelineDeps, req: Request, ids: RequestIds, agentId: string): Promise<Response> => {
  try {
    const agent = await callerOf(
      deps,
      req.headers,
      (key) => {
        const a = key.project.a2aAgents.get(agentId);
        if (!a) throw notServed(agentId);
        return a;
      },
      (e) => e.errorCode === 'a2a_agent_not_found',
    );
    await checkPin(agent);
    const url = new URL(req.url);
    const base = `${url.origin}/a2a/${encodeURIComponent(agentId)}`;
    return new Response(JSON.stringify(gatewayCard(agent.card, base)), {
      status: 200,
      headers: { 'content-type': JSON_CT, ...idHeaders(ids) },
    });
  } catch (e) {
    const err = e instanceof GatewayError ? e : rpcRefusal(500, -32603, 'The agent card could not be served.');
    return rpcErrorResponse(null, err, ids);
  }
};
