import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { RequestContext, TraceState } from '../pipeline/context.ts';
import type { RequestObserver } from '../pipeline/observe.ts';
import { OTHER_OPERATION, operationOf, providerNameOf } from './genai.ts';

/**
 * Traces as contract §8 fixes them: one SERVER span per request named
 * `{gen_ai.operation.name} {gen_ai.request.model}` and one CLIENT child span per upstream attempt
 * (fallbacks and retries are siblings; a failed one carries `error.type`), with the GenAI
 * attributes, `gateway.*` attributes, both request ids and the forwarded application headers.
 * A client's W3C `traceparent` is continued, and each attempt sends its own span's `traceparent`
 * upstream. Prompt and completion text only when the project's `trace-content` setting is true.
 * MCP calls (ctx.mcp) are named and attributed by the MCP conventions.
 */

type Api = typeof import('@opentelemetry/api');

/** Characters of prompt or completion text kept on a span when `trace-content` is on. */
const MAX_CONTENT = 16 * 1024;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Server address of an upstream URL, memoised per URL origin text. */
const hosts = new Map<string, string>();
const hostOf = (url: string): string | undefined => {
  const end = url.indexOf('/', url.indexOf('//') + 2);
  const origin = end === -1 ? url : url.slice(0, end);
  let host = hosts.get(origin);
  if (host === undefined) {
    try {
      host = new URL(origin).hostname;
    } catch {
      return undefined;
    }
    if (hosts.size < 1024) hosts.set(origin, host);
  }
  return host;
};

/** The request's input as `gen_ai.input.messages` text: the body's messages, input or prompt (JSON), cut at MAX_CONTENT. */
const inputContent = (bodyText: string | undefined): string | undefined => {
  if (bodyText === undefined) return undefined;
  try {
    const body: unknown = JSON.parse(bodyText);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const o = Object.fromEntries(Object.entries(body));
    const v: unknown = o.messages ?? o.input ?? o.prompt;
    return v === undefined ? undefined : JSON.stringify(v).slice(0, MAX_CONTENT);
  } catch {
    return undefined;
  }
};

const outputContent = (responseText: string | undefined, response: unknown): string | undefined => {
  const text = responseText ?? (response === undefined ? undefined : JSON.stringify(response));
  return text?.slice(0, MAX_CONTENT);
};

export const traceObserver = (api: Api, tracer: Tracer, spanHeaders: readonly string[]): RequestObserver => {
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT, trace } = api;

  /** The client's trace context (W3C `traceparent`), when valid. */
  const parentOf = (headers: Headers | undefined): Context => {
    const tp = headers?.get('traceparent');
    const m = tp ? TRACEPARENT.exec(tp.trim().toLowerCase()) : null;
    if (!m || /^0+$/.test(m[1] ?? '') || /^0+$/.test(m[2] ?? '')) return ROOT_CONTEXT;
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId: m[1] ?? '',
      spanId: m[2] ?? '',
      traceFlags: Number.parseInt(m[3] ?? '0', 16) & 1,
      isRemote: true,
    });
  };

  const operation = (ctx: RequestContext): string => (ctx.agent ? 'invoke_agent' : operationOf(ctx.endpoint, ctx.mcp?.method));
  /** A request of an endpoint that is no GenAI operation (`/v1/models`, files…) is named by its method and path. */
  const nameOf = (ctx: RequestContext, op: string): string => (op === OTHER_OPERATION ? `${ctx.method} ${ctx.endpoint}` : op);

  const endAttempt = (t: TraceState, attrs: Attributes): void => {
    const span = t.attempt;
    if (!span) return;
    t.attempt = undefined;
    span.setAttributes(attrs);
    span.end();
  };

  return {
    name: 'tracing',
    start(ctx) {
      const mcp = ctx.mcp;
      const attributes: Attributes = {
        // MCP conventions: gen_ai.operation.name only for a tool call (execute_tool).
        ...(mcp && mcp.method !== 'tools/call' ? {} : { 'gen_ai.operation.name': operation(ctx) }),
        'gateway.request_id': ctx.ids.requestId,
        'http.request.method': ctx.method,
        'url.path': ctx.endpoint,
      };
      if (ctx.ids.clientRequestId !== undefined) attributes['gateway.client_request_id'] = ctx.ids.clientRequestId;
      const headers = ctx.headers;
      if (headers)
        for (const h of spanHeaders) {
          const v = headers.get(h);
          if (v !== null) attributes[`gateway.header.${h}`] = v.slice(0, 256);
        }
      if (mcp) {
        attributes['mcp.method.name'] = mcp.method;
        attributes['gateway.mcp.server'] = mcp.server;
        if (mcp.name !== undefined && mcp.method === 'tools/call') attributes['gen_ai.tool.name'] = mcp.name;
        if (mcp.protocolVersion !== undefined) attributes['mcp.protocol.version'] = mcp.protocolVersion;
        if (mcp.sessionId !== undefined) attributes['mcp.session.id'] = mcp.sessionId;
        if (mcp.rpcId !== undefined) attributes['jsonrpc.request.id'] = mcp.rpcId;
      }
      if (ctx.agent) attributes['gen_ai.agent.id'] = ctx.agent.id;
      const server = tracer.startSpan(
        mcp ? `${mcp.method}${mcp.name ? ` ${mcp.name}` : ''}` : ctx.agent ? `invoke_agent ${ctx.agent.id}` : nameOf(ctx, operation(ctx)),
        { kind: SpanKind.SERVER, attributes },
        parentOf(headers),
      );
      ctx.trace = { server, attempt: undefined };
    },
    attemptStart(ctx, view) {
      const t = ctx.trace;
      if (!t) return;
      endAttempt(t, {});
      if (ctx.agent?.name !== undefined) t.server.setAttribute('gen_ai.agent.name', ctx.agent.name);
      const { connection, upstreamModel } = view.target;
      const mcp = ctx.mcp;
      // An MCP call's upstream span: the method and the name at the server, never a model or a provider.
      const attributes: Attributes = mcp
        ? {
            'mcp.method.name': mcp.method,
            ...(mcp.method === 'tools/call' ? { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': upstreamModel } : {}),
            'gateway.connection': connection.name,
          }
        : {
            'gen_ai.operation.name': operation(ctx),
            'gen_ai.provider.name': providerNameOf(connection.provider),
            'gen_ai.request.model': upstreamModel,
            'gateway.connection': connection.name,
          };
      const span: Span = tracer.startSpan(
        mcp ? `${mcp.method} ${upstreamModel}` : `${operation(ctx)} ${upstreamModel}`,
        {
          kind: SpanKind.CLIENT,
          attributes,
        },
        trace.setSpan(ROOT_CONTEXT, t.server),
      );
      t.attempt = span;
      const sc = span.spanContext();
      const tracestate = ctx.headers?.get('tracestate');
      ctx.upstreamHeaders = { traceparent: `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & 1}`, ...(tracestate ? { tracestate } : {}) };
    },
    attemptEnd(ctx, view, attempt, error) {
      const span = ctx.trace?.attempt;
      if (!span) return;
      const url = view.call?.url;
      const host = url ? hostOf(url) : undefined;
      if (host !== undefined) span.setAttribute('server.address', host);
      // The upstream's own status when it answered; a transport failure has none.
      const status = error ? error.upstreamStatus : attempt.status;
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      span.setAttribute('gateway.attempt_ms', attempt.ms);
      if (!error) return; // the answering attempt ends with the request (finish), usage and all
      span.setAttribute('error.type', error.errorCode);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message.slice(0, 256) });
      span.end();
      if (ctx.trace) ctx.trace.attempt = undefined;
    },
    finish(ctx, outcome, s) {
      const t = ctx.trace;
      if (!t) return;
      const last = outcome.attempts?.at(-1);
      const op = operation(ctx);
      const model = ctx.model;
      const response: Attributes = ctx.mcp
        ? {}
        : {
            'gen_ai.usage.input_tokens': s.inputTokens,
            'gen_ai.usage.output_tokens': s.outputTokens,
          };
      if (outcome.responseId) response['gen_ai.response.id'] = outcome.responseId;
      if (outcome.finishReason) response['gen_ai.response.finish_reasons'] = [outcome.finishReason];
      const responseModel = outcome.responseModel ?? last?.upstreamModel;
      if (responseModel && !ctx.mcp) response['gen_ai.response.model'] = responseModel;
      endAttempt(t, response);

      const server = t.server;
      if (!ctx.mcp && !ctx.agent && model && op !== OTHER_OPERATION) server.updateName(`${op} ${model}`);
      const attrs: Attributes = {
        ...response,
        'http.response.status_code': outcome.status,
        'gateway.attempts': outcome.attempts?.length ?? 0,
        'gateway.stream': ctx.stream,
        'gateway.cost_usd': s.costNanoUsd / 1e9,
      };
      if (model && !ctx.mcp && !ctx.agent) attrs['gen_ai.request.model'] = model;
      if (last) {
        if (!ctx.mcp) attrs['gen_ai.provider.name'] = providerNameOf(last.provider);
        attrs['gateway.connection'] = last.connection;
        attrs['gateway.upstream_model'] = last.upstreamModel;
      }
      if (ctx.maxOutputTokens !== undefined) attrs['gen_ai.request.max_tokens'] = ctx.maxOutputTokens;
      if (ctx.temperature !== undefined) attrs['gen_ai.request.temperature'] = ctx.temperature;
      const key = ctx.key;
      if (key) {
        attrs['gateway.customer_id'] = key.customerId;
        attrs['gateway.project_id'] = key.projectId;
        attrs['gateway.api_key_id'] = key.id;
        if (key.project.traceContent) {
          const input = inputContent(ctx.bodyText);
          const output = outputContent(outcome.responseText, outcome.response);
          if (input !== undefined) attrs['gen_ai.input.messages'] = input;
          if (output !== undefined && !outcome.error) attrs['gen_ai.output.messages'] = output;
        }
      }
      const decisions = ctx.guardrails;
      if (decisions) {
        // Provider guardrails (contract §15): one `name:stage:action:latencyMs` per decision.
        attrs['gateway.guardrails'] = decisions.map((d) => `${d.name}:${d.stage}:${d.action}:${d.latencyMs}`);
        for (const d of decisions)
          server.addEvent('gateway.guardrail', {
            'gateway.guardrail.name': d.name,
            'gateway.guardrail.stage': d.stage,
            'gateway.guardrail.action': d.action,
            'gateway.guardrail.provider': d.provider,
            'gateway.guardrail.latency_ms': d.latencyMs,
          });
      }
      if (outcome.error) {
        attrs['error.type'] = outcome.error.errorCode;
        // A SERVER span is an error for the gateway's own failures only (5xx), not a client's mistake.
        if (outcome.status >= 500) server.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message.slice(0, 256) });
      }
      server.setAttributes(attrs);
      server.end();
      ctx.trace = undefined;
    },
  };
};
