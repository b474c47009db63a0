import type { GatewayError } from '../core/errors.ts';
import type { Telemetry } from '../telemetry/tracing.ts';
import type { Outcome, RequestContext } from './pipeline/context.ts';
import type { Settlement } from './pipeline/settle.ts';

/**
 * Tracing of data-plane requests: a span opened when the request arrives and ended once, when the
 * pipeline finishes it. Records are not tracing's business (pipeline/record.ts).
 */

export const openSpan = (telemetry: Telemetry, ctx: RequestContext, req: Request): void => {
  if (!telemetry.enabled) return;
  ctx.span = telemetry.startRequest(`POST ${ctx.endpoint}`, req.headers, {
    'gateway.request_id': ctx.ids.requestId,
    ...(ctx.ids.clientRequestId !== undefined ? { 'gateway.client_request_id': ctx.ids.clientRequestId } : {}),
    'http.request.method': 'POST',
    'url.path': ctx.endpoint,
  });
};

export const endSpan = (telemetry: Telemetry, ctx: RequestContext, outcome: Outcome, s: Settlement): void => {
  if (!ctx.span) return;
  const last = outcome.attempts?.at(-1);
  const error: GatewayError | undefined = outcome.error;
  telemetry.endRequest(ctx.span, outcome.status, {
    'gateway.model': ctx.model ?? '',
    'gateway.provider': last?.provider ?? '',
    'gateway.connection': last?.connection ?? '',
    'gateway.upstream_model': last?.upstreamModel ?? '',
    'gateway.customer_id': ctx.key?.customerId ?? '',
    'gateway.project_id': ctx.key?.projectId ?? '',
    'gateway.api_key_id': ctx.key?.id ?? '',
    'gateway.attempts': outcome.attempts?.length ?? 0,
    'gateway.stream': ctx.stream,
    'gen_ai.usage.input_tokens': s.inputTokens,
    'gen_ai.usage.output_tokens': s.outputTokens,
    ...(error ? { 'error.type': error.errorCode } : {}),
  });
};
