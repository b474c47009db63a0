import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { asGatewayError, GatewayError } from '../core/errors.ts';
import { admit } from '../pipeline/admit.ts';
import { type InferenceDeps, NO_POLICIES, openContext, type Outcome } from '../pipeline/context.ts';
import { inspectInput, openOutput } from '../pipeline/guardrails.ts';
import { finish } from '../pipeline/index.ts';
import type { RequestIds } from '../data-plane/respond.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import { isTooLarge, TOO_LARGE_CODE } from './bounded.ts';

/**
 * The governed MCP calls — `tools/call`, `prompts/get`, `resources/read` — run through the
 * request stages every inference request runs through (data-plane/pipeline): input guardrails on
 * what is sent (tool arguments, prompt arguments), admission (the project's `rate-limit`
 * requests per minute: one call is one request), the call, output guardrails on what comes back
 * (the result's content strings), then settle → record, once; every stage is reported to the
 * data plane's observers (pipeline/observe.ts: spans and metrics by the MCP conventions). The record: endpoint
 * `/mcp/{profileId}`, `model` the method, `provider` `mcp`, `connection` the server id,
 * `upstream_model` the tool or prompt name at the server (or the resource URI), the status and
 * latency, and the bodies under the project's retention.
 */

export type GovernedMethod = 'tools/call' | 'prompts/get' | 'resources/read';

export interface GovernedCall {
  deps: InferenceDeps;
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
    return new GatewayError({ kind: 'timeout', status: 504, errorCode: 'upstream_timeout', message: `MCP server '${serverId}' did not answer in time.` });
  if (isTooLarge(e)) return new GatewayError({ kind: 'bad_gateway', errorCode: TOO_LARGE_CODE, message: `MCP server '${serverId}' sent a message larger than GATEWAY_MCP_MAX_MESSAGE.`, retryable: true });
  const detail = e instanceof McpError ? ` (JSON-RPC ${e.code})` : '';
  return new GatewayError({ kind: 'upstream_error', status: 502, errorCode: 'mcp_upstream_error', message: `MCP server '${serverId}' failed${detail}.` });
};

/**
 * Runs one governed call: `run` gets the (possibly redacted) input and returns the upstream's
 * result; the result handed back is the output-guarded one. Refusals and failures are thrown as
 * McpError (the record is written either way).
 */
export const governed = async <R extends Record<string, unknown>>(c: GovernedCall, run: (input: Record<string, unknown> | undefined) => Promise<R>): Promise<R> => {
  const ctx = openContext(`/mcp/${c.profileId}`, c.ids, c.deps.observers);
  ctx.headers = c.headers;
  ctx.key = c.key;
  ctx.model = c.method;
  ctx.bodyText = JSON.stringify(c.params ?? null);
  ctx.mcp = { method: c.method, server: c.serverId, ...(c.method === 'resources/read' ? {} : { name: c.listed }) };
  ctx.observers.start(ctx);
  const policies = c.deps.policies ?? NO_POLICIES;
  // The call to the MCP server is the request's one upstream attempt, reported like an inference attempt.
  const view = { target: { connection: { name: c.serverId, provider: 'mcp' }, upstreamModel: c.target } };
  const attempt = (status: number, ms: number, errorCode?: string) => ({ connection: c.serverId, provider: 'mcp', upstreamModel: c.target, status, ms, ...(errorCode ? { errorCode } : {}) });
  const done = (o: Outcome): void => finish(c.deps, ctx, o);
  let input = c.input;
  try {
    if (input !== undefined && policies.input.length > 0) {
      const inspected = await inspectInput(policies.input, ctx, input);
      if (inspected.changed && typeof inspected.body === 'object' && inspected.body !== null && !Array.isArray(inspected.body)) {
        input = Object.fromEntries(Object.entries(inspected.body));
        ctx.bodyText = JSON.stringify({ ...(typeof c.params === 'object' && c.params !== null ? c.params : {}), arguments: input });
      }
    }
    if (policies.admit.length > 0) await admit(policies.admit, ctx);
  } catch (e) {
    const err = asGatewayError(e);
    done({ status: err.status, error: err });
    throw refusal(err);
  }
  const t0 = performance.now();
  let result: R;
  ctx.observers.attemptStart(ctx, view);
  try {
    result = await run(input);
  } catch (e) {
    const ms = Math.round(performance.now() - t0);
    const err = upstreamFailure(e, c.serverId);
    const failed = attempt(err.status, ms, err.errorCode);
    ctx.observers.attemptEnd(ctx, view, failed, err);
    done({ status: err.status, error: err, attempts: [failed] });
    throw e instanceof McpError ? e : new McpError(ErrorCode.InternalError, err.message);
  }
  const ms = Math.round(performance.now() - t0);
  const answered = attempt(200, ms, result.isError === true ? 'tool_error' : undefined);
  ctx.observers.attemptEnd(ctx, view, answered, undefined);
  try {
    const output = policies.guardrails.length > 0 ? openOutput(policies.guardrails, ctx) : undefined;
    if (output) {
      const view = await output.answer({ kind: 'extra', json: result, contentType: JSON_CT });
      if (view.kind === 'extra' && view.json !== result && typeof view.json === 'object' && view.json !== null && !Array.isArray(view.json)) result = { ...result, ...view.json };
    }
  } catch (e) {
    const err = asGatewayError(e);
    done({ status: err.status, error: err, attempts: [answered] });
    throw refusal(err);
  }
  done({ status: 200, response: result, attempts: [answered] });
  return result;
};
