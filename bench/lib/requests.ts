/**
 * What each target is sent, per scenario kind. The same client bodies go to every target; only
 * the model id (public vs upstream), credentials and routing headers differ.
 */
import { mockPrefix } from '../mock-upstream.ts';
import { MODELS, SLOW_UPSTREAM } from './gateway.ts';
import { peerHeaders } from './peer.ts';
import type { StreamKind } from './probe.ts';
import type { WrkRequest } from './wrk.ts';

export type Kind =
  | 'chat-json'
  | 'chat-sse'
  | 'messages-sse'
  | 'messages-x-sse'
  | 'responses-sse'
  | 'gemini-sse'
  | 'converse-sse'
  | 'fallback-json'
  | 'failing-primary'
  | 'churn-json'
  | 'slow-sse';

export type TargetName = 'direct' | 'bare' | 'floor-json' | 'floor-raw' | 'gateway' | 'gateway-pg' | 'dataplane' | 'portkey';

/** The product floor's two targets (bench/product-proxy.ts `--work product --bodies json|raw`). */
export const FLOOR_TARGETS = ['floor-json', 'floor-raw'] as const satisfies readonly TargetName[];
export const isFloor = (n: TargetName): boolean => n === 'floor-json' || n === 'floor-raw';

export const KIND_LABEL: Record<Kind, string> = {
  'chat-json': 'Chat Completions, non-streaming',
  'chat-sse': 'Chat Completions, streaming',
  'messages-sse': 'Messages → Anthropic, streaming',
  'messages-x-sse': 'Messages → OpenAI upstream (cross-format), streaming',
  'responses-sse': 'Responses → OpenAI upstream (sent natively), streaming',
  'gemini-sse': 'Gemini streamGenerateContent → OpenAI upstream (cross-format), streaming',
  'converse-sse': 'Bedrock ConverseStream → OpenAI upstream (cross-format, AWS event-stream), streaming',
  'fallback-json': 'Fallback: primary 503 at once → backup, non-streaming (circuit breakers off)',
  'failing-primary': 'Failing primary (503) with its circuit breaker open → backup, non-streaming',
  'churn-json': 'Chat non-streaming during route updates (10/s)',
  'slow-sse': 'Slow upstream (50 ms + 20 ms/event), 1k concurrent streams',
};

/** Cross-format streams to the OpenAI mock: the bare proxy's chat stream is their reference. */
export const CROSS_FORMAT_SSE: ReadonlySet<Kind> = new Set<Kind>(['messages-x-sse', 'responses-sse', 'gemini-sse', 'converse-sse']);

/** What the probe checks a finished body for. */
export const streamKind = (k: Kind): StreamKind =>
  k === 'messages-sse' || k === 'messages-x-sse'
    ? 'messages'
    : k === 'responses-sse'
      ? 'responses'
      : k === 'gemini-sse'
        ? 'gemini'
        : k === 'converse-sse'
          ? 'converse'
          : k.endsWith('-json') || k === 'failing-primary'
            ? 'json'
            : 'chat';

const SYSTEM = 'You are a concise assistant. Answer in one short paragraph.';
const USER = 'Summarise why an AI gateway should add as little latency as possible to each request.';

const chatBody = (model: string, stream: boolean): string =>
  JSON.stringify({
    model,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
    ],
    max_tokens: 256,
    temperature: 0.7,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });

const messagesBody = (model: string): string =>
  JSON.stringify({ model, max_tokens: 256, temperature: 0.7, system: SYSTEM, messages: [{ role: 'user', content: USER }], stream: true });

const responsesBody = (model: string): string =>
  JSON.stringify({ model, instructions: SYSTEM, input: USER, max_output_tokens: 256, temperature: 0.7, stream: true });

const geminiBody = (): string =>
  JSON.stringify({
    systemInstruction: { parts: [{ text: SYSTEM }] },
    contents: [{ role: 'user', parts: [{ text: USER }] }],
    generationConfig: { maxOutputTokens: 256, temperature: 0.7 },
  });

const converseBody = (): string =>
  JSON.stringify({
    system: [{ text: SYSTEM }],
    messages: [{ role: 'user', content: [{ text: USER }] }],
    inferenceConfig: { maxTokens: 256, temperature: 0.7 },
  });

const JSON_CT = { 'content-type': 'application/json' };

/** The gateway: public model ids, one request per API key (so every key is exercised). */
export const gatewayRequests = (kind: Kind, keys: readonly string[]): WrkRequest[] => {
  const auth = (k: string) => ({ ...JSON_CT, authorization: `Bearer ${k}` });
  const one = (k: string): WrkRequest => {
    switch (kind) {
      case 'chat-json':
        return { path: '/v1/chat/completions', headers: auth(k), body: chatBody(MODELS.openai, false) };
      case 'chat-sse':
        return { path: '/v1/chat/completions', headers: auth(k), body: chatBody(MODELS.openai, true) };
      case 'messages-sse':
        return { path: '/v1/messages', headers: { ...auth(k), 'anthropic-version': '2023-06-01' }, body: messagesBody(MODELS.anthropic) };
      case 'messages-x-sse':
        return { path: '/v1/messages', headers: { ...auth(k), 'anthropic-version': '2023-06-01' }, body: messagesBody(MODELS.openai) };
      case 'responses-sse':
        return { path: '/v1/responses', headers: auth(k), body: responsesBody(MODELS.openai) };
      case 'gemini-sse':
        return {
          path: `/v1beta/models/${MODELS.openai}:streamGenerateContent?alt=sse`,
          headers: { ...JSON_CT, 'x-goog-api-key': k },
          body: geminiBody(),
        };
      case 'converse-sse':
        return { path: `/model/${encodeURIComponent(MODELS.openai)}/converse-stream`, headers: auth(k), body: converseBody() };
      case 'fallback-json':
        return { path: '/v1/chat/completions', headers: auth(k), body: chatBody(MODELS.fallback, false) };
      case 'failing-primary':
        return { path: '/v1/chat/completions', headers: auth(k), body: chatBody(MODELS.failingPrimary, false) };
      case 'churn-json':
        return { path: '/v1/chat/completions', headers: auth(k), body: chatBody(MODELS.churn, false) };
      case 'slow-sse':
        return { path: '/v1/chat/completions', headers: auth(k), body: chatBody(MODELS.slow, true) };
    }
  };
  return keys.map(one);
};

const SLOW_PREFIX = mockPrefix(SLOW_UPSTREAM);

/**
 * The mock itself ('direct') and the bare proxy (which forwards the path to the mock): upstream
 * model ids. Kinds the bare proxy cannot do (format translation, fallback) map to the same-wire
 * request they are compared with.
 */
export const upstreamRequests = (kind: Kind): WrkRequest[] => {
  const h = { ...JSON_CT, authorization: 'Bearer sk-upstream-bench-openai' };
  switch (kind) {
    case 'chat-json':
    case 'fallback-json':
    case 'failing-primary':
    case 'churn-json':
      return [{ path: '/v1/chat/completions', headers: h, body: chatBody('gpt-4o-mini', false) }];
    case 'chat-sse':
    case 'messages-x-sse':
    case 'responses-sse':
    case 'gemini-sse':
    case 'converse-sse':
      return [{ path: '/v1/chat/completions', headers: h, body: chatBody('gpt-4o-mini', true) }];
    case 'messages-sse':
      return [
        {
          path: '/v1/messages',
          headers: { ...JSON_CT, 'x-api-key': 'sk-ant-upstream-bench', 'anthropic-version': '2023-06-01' },
          body: messagesBody('claude-haiku-4-5'),
        },
      ];
    case 'slow-sse':
      return [{ path: `${SLOW_PREFIX}/v1/chat/completions`, headers: h, body: chatBody('gpt-4o-mini', true) }];
  }
};

/**
 * The product floor: the upstream's own requests (its bearer key, `sk-upstream-bench-openai`, is
 * registered in it like any other; the model is the upstream's). It serves Chat Completions only.
 */
export const floorRequests = (kind: Kind): WrkRequest[] | undefined =>
  kind === 'chat-json' || kind === 'chat-sse' ? upstreamRequests(kind) : undefined;

/** Portkey: routing travels in headers (provider, custom host = the mock). */
export const peerRequests = (kind: Kind, mock: string): WrkRequest[] | undefined => {
  const h = (base: string) => ({ ...JSON_CT, ...peerHeaders(base) });
  switch (kind) {
    case 'chat-json':
      return [{ path: '/v1/chat/completions', headers: h(mock), body: chatBody('gpt-4o-mini', false) }];
    case 'chat-sse':
      return [{ path: '/v1/chat/completions', headers: h(mock), body: chatBody('gpt-4o-mini', true) }];
    case 'slow-sse':
      return [{ path: '/v1/chat/completions', headers: h(`${mock}${SLOW_PREFIX}`), body: chatBody('gpt-4o-mini', true) }];
    default:
      return undefined;
  }
};
