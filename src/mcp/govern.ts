import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { asGatewayError, GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { Attempt, RequestContext, RequestIds } from '../pipeline/context.ts';
import { NO_POLICIES, type PipelineDeps, type Policies } from '../pipeline/deps.ts';
import { admitted, outputOf } from '../pipeline/govern.ts';
import { type Door, enter } from '../pipeline/index.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import { isTooLarge, TOO_LARGE_CODE } from './bounded.ts';

/**
 * The governed MCP calls — `tools/call`, `prompts/get`, `resources/read` — enter through the
 * pipeline's door (pipeline/door.ts `enter`, the caller already known from the MCP transport) and
 * run its governed stages (pipeline/govern.ts) in the order every inference request runs them:
 * input guardrails on what is sent (tool arguments, prompt arguments), admission (the project's
 * `rate-limit` requests per minute: one call is one request), the call, output guardrails on what
 * comes back (the result's content strings), then settle → record, once; every stage is reported
 * to the plane's observers (pipeline/observe.ts: spans and metrics by the MCP conventions). The record: endpoint
 * `/mcp/{profileId}`, `model` the method, `provider` `mcp`, `connection` the server id,
 * `upstream_model` the tool or prompt name at the server (or the resource URI), the status and
 * latency, and the bodies under the project's retention.
 */

export type GovernedMethod = 'tools/call' | 'prompts/get' | 'resources/read';

export interface GovernedCall {
  deps: PipelineDeps;
  key: KeySnapshot;
  ids: RequestIds;
  headers: Headers;
  profileId: string;
  method: GovernedMethod;
  serverId: string;
  /** The name at the server (tool, prompt) or the resource URI. */
  target: string;
  /** The name the client used (prefixed). */
  listed: string;
  /** What input guardrails look at: tool or prompt arguments (undefined for resources). */
  input: Record<string, unknown> | undefined;
  /** The whole params as the record keeps them. */
  params: unknown;
  /** What the span carries by the MCP conventions: the client's protocol revision, its 2025 session, the JSON-RPC id. */
  protocol?: { version?: string; sessionId?: string; rpcId?: string };
}

const JSON_CT = 'application/json';

/** The JSON-RPC error a refusal of the gateway becomes (the code the SDK client raises as McpError). */
export const refusal = (e: GatewayError): McpError =>
  new McpError(e.status === 429 ? -32029 : e.status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidRequest, e.message, {
    type: e.type,
    code: e.errorCode,
    ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
  });

/** An upstream failure as the record keeps it (the client gets the upstream's own JSON-RPC error). */
const upstreamFailure = (e: unknown, serverId: string): GatewayError => {
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout)
    return new GatewayError({
      kind: 'timeout',
      status: 504,
      errorCode: 'upstream_timeout',
      message: `MCP server '${serverId}' did not answer in time.`,
    });
  if (isTooLarge(e))
    return new GatewayError({
      kind: 'bad_gateway',
      errorCode: TOO_LARGE_CODE,
      message: `MCP server '${serverId}' sent a message larger than GATEWAY_MCP_MAX_MESSAGE_BYTES.`,
      retryable: true,
    });
  const detail = e instanceof McpError ? ` (JSON-RPC ${e.code})` : '';
  return new GatewayError({
    kind: 'upstream_error',
    status: 502,
    errorCode: 'mcp_upstream_error',
    message: `MCP server '${serverId}' failed${detail}.`,
  });
};

/** What a governed call came to: the (output-guarded) result, or the JSON-RPC error the client gets. */
type Called<R> = { ok: true; result: R } | { ok: false; error: McpError };

/** A resource read has no arguments: the input guardrails have nothing to look at. */
const withoutInput = (p: Policies): Policies => (p.input.length === 0 ? p : { ...p, input: [] });

/** The call behind the door: the governed stages, the upstream call (its one attempt), the output guardrails; finished on every path. */
const call = async <R extends Record<string, unknown>>(
  c: GovernedCall,
  ctx: RequestContext,
  door: Door,
  run: (input: Record<string, unknown> | undefined) => Promise<R>,
): Promise<Called<R>> => {
  const done = door.own();
  const policies = c.deps.policies ?? NO_POLICIES;
  let input = c.input;
  // A refusal here is thrown: the door finishes the request and answers it (refusal below).
  const admitting = admitted(input === undefined ? withoutInput(policies) : policies, ctx, input, (redacted) => {
    if (!isRecord(redacted)) return;
    input = Object.fromEntries(Object.entries(redacted));
    ctx.bodyText = JSON.stringify({ ...(isRecord(c.params) ? c.params : {}), arguments: input });
  });
  if (admitting instanceof Promise) await admitting;
  // The call to the MCP server is the request's one upstream attempt, reported like an inference attempt.
  const view = { target: { connection: { name: c.serverId, provider: 'mcp' }, upstreamModel: c.target } };
  const attempt = (status: number, ms: number, errorCode?: string): Attempt => ({
    connection: c.serverId,
    provider: 'mcp',
    upstreamModel: c.target,
    status,
    ms,
    ...(errorCode ? { errorCode } : {}),
  });
  const t0 = performance.now();
  let result: R;
  ctx.observers.attemptStart(ctx, view);
  try {
    result = await run(input);
  } catch (e) {
    const err = upstreamFailure(e, c.serverId);
    const failed = attempt(err.status, Math.round(performance.now() - t0), err.errorCode);
    ctx.observers.attemptEnd(ctx, view, failed, err);
    done({ status: err.status, error: err, attempts: [failed] });
    return { ok: false, error: e instanceof McpError ? e : new McpError(ErrorCode.InternalError, err.message) };
  }
  const answered = attempt(200, Math.round(performance.now() - t0), result.isError === true ? 'tool_error' : undefined);
  ctx.observers.attemptEnd(ctx, view, answered, undefined);
  try {
    const output = outputOf(policies, ctx);
    if (output) {
      const view = await output.answer({ kind: 'extra', json: result, contentType: JSON_CT });
      if (view.kind === 'extra' && view.json !== result && isRecord(view.json)) result = { ...result, ...view.json };
    }
  } catch (e) {
    const err = asGatewayError(e);
    done({ status: err.status, error: err, attempts: [answered] });
    return { ok: false, error: refusal(err) };
  }
  done({ status: 200, response: result, attempts: [answered] });
  return { ok: true, result };
};

/** A refusal of the door or of the governed stages, as the JSON-RPC error the client gets. */
const refused = (e: GatewayError): never => {
  throw refusal(e);
};

/**
 * Runs one governed call: `run` gets the (possibly redacted) input and returns the upstream's
 * result; the result handed back is the output-guarded one. Refusals and failures are thrown as
 * McpError (the record is written either way).
 */
export const governed = async <R extends Record<string, unknown>>(
  c: GovernedCall,
  run: (input: Record<string, unknown> | undefined) => Promise<R>,
): Promise<R> => {
  const called = await enter<Called<R>>(
    c.deps,
    {
      path: `/mcp/${c.profileId}`,
      ids: c.ids,
      headers: c.headers,
      method: 'POST',
      as: () => c.key,
      opened: (ctx) => {
        ctx.model = c.method;
        ctx.bodyText = JSON.stringify(c.params ?? null);
        ctx.mcp = {
          method: c.method,
          server: c.serverId,
          ...(c.method === 'resources/read' ? {} : { name: c.listed }),
          ...(c.protocol?.version !== undefined ? { protocolVersion: c.protocol.version } : {}),
          ...(c.protocol?.sessionId !== undefined ? { sessionId: c.protocol.sessionId } : {}),
          ...(c.protocol?.rpcId !== undefined ? { rpcId: c.protocol.rpcId } : {}),
        };
      },
    },
    (ctx, door) => call(c, ctx, door, run),
    { status: () => 200, fail: refused },
  );
  if (!called.ok) throw called.error;
  return called.result;
};
