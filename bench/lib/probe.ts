/**
 * Open-loop latency probe for streams: starts one request every 1000/rate ms whatever happened to
 * the previous ones, and records time to the first body byte (first SSE event) and to the end of
 * the stream. wrk reports only whole-response latency, so this small client measures first-event
 * latency; at 100 streams/s it is nowhere near a bottleneck. It also checks every stream's content
 * (terminal event present, usage present, no error event), which wrk cannot.
 */
import type { WrkRequest } from './wrk.ts';

export type StreamKind = 'chat' | 'messages' | 'responses' | 'gemini' | 'converse' | 'json';

export interface ProbeOptions {
  url: string;
  requests: WrkRequest[];
  rate: number;
  durationS: number;
  kind: StreamKind;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface ProbeResult {
  count: number;
  errors: number;
  firstError: string | undefined;
  achievedRate: number;
  /** ms to the first body chunk. */
  ttfb: Percentiles;
  /** ms to the end of the body. */
  total: Percentiles;
}

export const percentiles = (values: number[]): Percentiles => {
  if (values.length === 0) return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN, mean: Number.NaN };
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s[s.length - 1] as number, mean: s.reduce((a, b) => a + b, 0) / s.length };
};

/** Why a finished body is not a complete, successful response of its kind (undefined when it is). */
export const checkBody = (kind: StreamKind, status: number, body: string): string | undefined => {
  if (status !== 200) return `HTTP ${status}: ${body.slice(0, 200)}`;
  switch (kind) {
    case 'chat':
      if (body.includes('"error"')) return `error event: ${body.slice(0, 200)}`;
      if (!body.includes('data: [DONE]')) return 'no [DONE]';
      if (!body.includes('"usage":{')) return 'no usage chunk';
      return undefined;
    case 'messages':
      if (body.includes('event: error')) return `error event: ${body.slice(0, 200)}`;
      if (!body.includes('event: message_stop')) return 'no message_stop';
      if (!/"output_tokens":[1-9]/.test(body)) return 'no output_tokens in message_delta';
      return undefined;
    case 'responses':
      if (body.includes('event: error') || body.includes('event: response.failed')) return `error event: ${body.slice(0, 200)}`;
      if (!body.includes('event: response.completed')) return 'no response.completed';
      if (!body.includes('"output_tokens":')) return 'no usage';
      return undefined;
    case 'gemini':
      if (body.includes('"error"')) return `error event: ${body.slice(0, 200)}`;
      if (!body.includes('"finishReason"')) return 'no finishReason';
      if (!/"candidatesTokenCount":[1-9]/.test(body)) return 'no usageMetadata';
      return undefined;
    case 'converse':
      // AWS event-stream (binary framing; the event names and JSON payloads read as text).
      if (body.includes('Exception')) return `exception event: ${body.slice(0, 200)}`;
      if (!body.includes('messageStop')) return 'no messageStop';
      if (!/"outputTokens":[1-9]/.test(body)) return 'no usage in metadata';
      return undefined;
    case 'json':
      try {
        JSON.parse(body);
        return undefined;
      } catch {
        return 'not JSON';
      }
  }
};

const one = async (o: ProbeOptions, r: WrkRequest): Promise<{ ttfb: number; total: number; error: string | undefined }> => {
  const t0 = performance.now();
  let ttfb = Number.NaN;
  try {
    const res = await fetch(`${o.url}${r.path}`, { method: 'POST', headers: r.headers, body: r.body });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (Number.isNaN(ttfb)) ttfb = performance.now() - t0;
      text += dec.decode(value, { stream: true });
    }
    const total = performance.now() - t0;
    return { ttfb, total, error: checkBody(o.kind, res.status, text) };
  } catch (e) {
    return { ttfb, total: performance.now() - t0, error: e instanceof Error ? e.message : String(e) };
  }
};

export const runProbe = async (o: ProbeOptions): Promise<ProbeResult> => {
  const n = Math.max(1, Math.round(o.rate * o.durationS));
  const interval = 1000 / o.rate;
  const started = performance.now();
  const pending: Promise<{ ttfb: number; total: number; error: string | undefined }>[] = [];
  let last = started;
  for (let i = 0; i < n; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    last = performance.now();
    pending.push(one(o, o.requests[i % o.requests.length] as WrkRequest));
  }
  const results = await Promise.all(pending);
  const elapsed = (last - started + interval) / 1000;
  const failed = results.filter((r) => r.error !== undefined);
  return {
    count: results.length,
    errors: failed.length,
    firstError: failed[0]?.error,
    achievedRate: results.length / elapsed,
    ttfb: percentiles(results.filter((r) => !Number.isNaN(r.ttfb)).map((r) => r.ttfb)),
    total: percentiles(results.map((r) => r.total)),
  };
};
