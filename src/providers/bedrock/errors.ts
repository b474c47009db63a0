/** Bedrock errors: `{message}` bodies with `x-amzn-ErrorType`, and exception frames mid-stream. */
import { GatewayError } from '../../core/errors.ts';
import { asRecord, asString, parseJson } from '../json.ts';
import { redactExcerpt } from '../redact.ts';
import { cleanMessage, mapUpstreamError } from '../upstream-error.ts';

/** `ValidationException:http://internal.amazon.com/coral/…` → `ValidationException`. */
export const errorTypeOf = (raw: string | null | undefined): string | undefined => {
  const t = raw?.split(':')[0]?.trim();
  return t === undefined || t === '' ? undefined : t;
};

const messageOf = (body: string): { message?: string; type?: string } => {
  const parsed = parseJson(body);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  if (!o) return {};
  return { message: asString(o['message']) ?? asString(o['Message']), type: errorTypeOf(asString(o['__type'])) };
};

export const parseBedrockError = (provider: string, status: number, body: string, headers: Headers): GatewayError => {
  const { message, type: bodyType } = messageOf(body);
  const type = errorTypeOf(headers.get('x-amzn-errortype')) ?? bodyType;
  // 424 ModelErrorException: the model failed on this request; another target may well succeed.
  if (status === 424) {
    return new GatewayError({
      kind: 'unavailable',
      message: cleanMessage(message) ?? `Upstream provider '${provider}' reported a model error (HTTP 424).`,
      retryable: true,
      upstreamBody: redactExcerpt(body),
      upstreamStatus: status,
    });
  }
  return mapUpstreamError({
    provider,
    status,
    body,
    headers,
    message,
    type,
    code: status === 404 && type === 'ResourceNotFoundException' ? 'model_not_found' : undefined,
  });
};

/** `:exception-type` of a ConverseStream exception frame → the HTTP status it stands for. */
const EXCEPTION_STATUS: Record<string, number> = {
  internalServerException: 500,
  modelStreamErrorException: 424,
  validationException: 400,
  throttlingException: 429,
  serviceUnavailableException: 503,
};

/** An exception (or generic error) frame inside a 200 ConverseStream. */
export const bedrockStreamException = (provider: string, type: string | undefined, raw: string, headerMessage?: string): GatewayError => {
  const parsed = parseJson(raw);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  const message = asString(o?.['message']) ?? asString(o?.['Message']) ?? headerMessage;
  const status = EXCEPTION_STATUS[type ?? ''] ?? 502;
  const text = cleanMessage(message) ?? `Upstream provider '${provider}' reported ${type ?? 'an error'} mid-stream.`;
  const common = { message: text, upstreamBody: redactExcerpt(raw) };
  if (status === 400) return new GatewayError({ kind: 'invalid_request', retryable: false, ...common });
  if (status === 429) return new GatewayError({ kind: 'rate_limit', retryable: true, ...common });
  if (status === 503) return new GatewayError({ kind: 'unavailable', retryable: true, ...common });
  return new GatewayError({ kind: 'upstream_error', retryable: true, ...common });
};
