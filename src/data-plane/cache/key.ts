import type { CanonicalResponse, ClientFormat, FinishReason, ToolCall, Usage } from '../../canonical/types.ts';
import { jcs } from '../../core/jcs.ts';
import { isRecord } from '../../core/json.ts';
import type { ResponseCacheSetting } from '../../governance/setting-values.ts';
import type { KeySnapshot } from '../../propagation/snapshot.ts';
import type { ResponseCacheStore } from './store.ts';

/**
 * The response-cache stage (contract §11), between admission and dispatch: a project without the
 * `response-cache` setting pays one property read (`key.project.responseCache`), nothing else.
 *
 * The key is the project's row id (a re-created project is another), the key's id for scope
 * `api_key`, the client format, the public model and the body as canonical JSON (RFC 8785)
 * without the members that do not change the answer. Lookups happen only after authentication
 * against the served snapshot, so the entries of a deleted project or a revoked key are
 * unreachable as soon as the plane serves the change.
 */

export type CacheOutcome = 'hit' | 'miss' | 'bypass';

/** Members that do not change the answer, left out of the key. */
const IGNORED = new Set(['stream', 'stream_options', 'user', 'metadata']);

/** What the request does with the cache, from its `Cache-Control` header. */
export interface CacheControl {
  read: boolean;
  write: boolean;
}

export const cacheControlOf = (headers: Headers | undefined): CacheControl => {
  const v = headers?.get('cache-control');
  if (!v) return { read: true, write: true };
  const d = v.toLowerCase();
  if (d.includes('no-store')) return { read: false, write: false };
  if (d.includes('no-cache')) return { read: false, write: true };
  return { read: true, write: true };
};

/** The store key of a request's answer, or undefined when the body is not a JSON object. */
export const cacheKey = (
  key: KeySnapshot,
  setting: ResponseCacheSetting,
  format: ClientFormat,
  model: string,
  body: unknown,
): string | undefined => {
  if (!isRecord(body)) return undefined;
  const kept: Record<string, unknown> = {};
  for (const k of Object.keys(body)) if (!IGNORED.has(k)) kept[k] = body[k];
  const hash = new Bun.CryptoHasher('sha256').update(`${format}\n${model}\n${jcs(kept)}`).digest('hex');
  const who = setting.scope === 'api_key' ? key.id : '-';
  return `gw:rc:1:${key.project.id}:${who}:${hash}`;
};

/** One cached answer as the store keeps it (JSON text). */
interface CachedAnswer {
  v: 1;
  response: CanonicalResponse;
}

export const encodeCached = (response: CanonicalResponse): string => JSON.stringify({ v: 1, response } satisfies CachedAnswer);

const FINISH = new Set<string>(['stop', 'length', 'tool_calls', 'content_filter']);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

const usageOf = (u: Record<string, unknown>): Usage => {
  const out: Usage = { inputTokens: num(u.inputTokens) ?? 0, outputTokens: num(u.outputTokens) ?? 0 };
  for (const k of ['cachedInputTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
    const n = num(u[k]);
    if (n !== undefined) out[k] = n;
  }
  return out;
};

/** The cached answer, or undefined when the text is not one (a newer or damaged entry is a miss). */
export const decodeCached = (text: string): CanonicalResponse | undefined => {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(v) || v.v !== 1 || !isRecord(v.response)) return undefined;
  const r = v.response;
  if (typeof r.text !== 'string' || !Array.isArray(r.toolCalls) || !isRecord(r.usage)) return undefined;
  const toolCalls: ToolCall[] = [];
  for (const c of r.toolCalls) if (isRecord(c)) toolCalls.push({ id: str(c.id), name: str(c.name), arguments: str(c.arguments) });
  const finish = str(r.finishReason);
  return {
    id: str(r.id),
    model: str(r.model),
    created: num(r.created) ?? Math.floor(Date.now() / 1000),
    text: r.text,
    toolCalls,
    ...(typeof r.reasoning === 'string' ? { reasoning: r.reasoning } : {}),
    ...(typeof r.reasoningSignature === 'string' ? { reasoningSignature: r.reasoningSignature } : {}),
    finishReason: FINISH.has(finish) ? (finish as FinishReason) : 'stop',
    usage: usageOf(r.usage),
  };
};

/** The cache a request uses, when its project set one and the plane has a store. */
export interface RequestCache {
  store: ResponseCacheStore;
  key: string;
  ttlMs: number;
  control: CacheControl;
}

export const requestCache = (
  store: ResponseCacheStore | undefined,
  key: KeySnapshot | undefined,
  format: ClientFormat,
  model: string,
  body: unknown,
  headers: Headers | undefined,
): RequestCache | undefined => {
  const setting = key?.project.responseCache;
  if (!setting || !store || !key) return undefined;
  const k = cacheKey(key, setting, format, model, body);
  return k === undefined ? undefined : { store, key: k, ttlMs: setting.ttlSeconds * 1000, control: cacheControlOf(headers) };
};
