/** Non-2xx answers from OpenAI-compatible upstreams → GatewayError. */
import type { GatewayError } from '../../core/errors.ts';
import { asArray, asRecord, asString, parseJson } from '../json.ts';
import { mapUpstreamError } from '../upstream-error.ts';

interface Extracted {
  message?: string;
  type?: string;
  code?: string;
  param?: string | null;
}

/**
 * Reads the error shapes seen behind the OpenAI wire: `{error:{message,type,param,code}}` (OpenAI,
 * Groq, OpenRouter with a numeric code), `{object:'error', message, type, param, code}` (vLLM,
 * Mistral), `{error:"…"}` (Ollama, TGI), `{message}` / `{detail}` (FastAPI servers), and the
 * Cloudflare envelope `{errors:[{message}]}`.
 */
export const extractOpenAIError = (body: string): Extracted => {
  const parsed = parseJson(body);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  if (!o) return {};
  const src = asRecord(o['error']) ?? o;
  const code = src['code'];
  const param = src['param'];
  return {
    message: findMessage(src) ?? findMessage(o),
    type: asString(src['type']),
    code: typeof code === 'string' ? code : undefined,
    param: typeof param === 'string' ? param : null,
  };
};

/** The first human-readable message in the usual places (`message`, `msg`, `detail`, `error`, `errors`). */
const findMessage = (v: unknown, depth = 0): string | undefined => {
  if (typeof v === 'string') return v;
  if (depth > 3) return undefined;
  if (Array.isArray(v)) return findMessage(v[0], depth + 1);
  const o = asRecord(v);
  if (!o) return undefined;
  const msg = asString(o['msg']);
  const loc = asArray(o['loc']);
  if (msg !== undefined && loc) return `${msg} (${loc.map(String).join('.')})`;
  for (const key of ['message', 'msg', 'detail', 'error', 'errors']) {
    const found = findMessage(o[key], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
};

export const parseOpenAIError = (provider: string, status: number, body: string, headers: Headers): GatewayError =>
  mapUpstreamError({ provider, status, body, headers, ...extractOpenAIError(body) });
