/**
 * A tiny Bun server whose every byte comes from the format codecs, for driving the official
 * `openai` and `@anthropic-ai/sdk` clients: the SDK's request body goes through decodeRequest, the
 * scripted canonical answer through encodeResponse / the stream encoder / encodeError.
 */
import type { CanonicalRequest, CanonicalResponse, ClientFormat, StreamEvent } from '../canonical/types.ts';
import { type ErrorKind, GatewayError, asGatewayError } from '../core/errors.ts';
import { codecFor } from './registry.ts';
import { FIXTURES, type StreamFixture, loadStreamFixture, readJson } from './test-support.ts';

export interface Script {
  response?: CanonicalResponse;
  events?: StreamEvent[];
  error?: { kind: ErrorKind; message: string };
}

export const REQUEST_ID = '5d2c9a1e-7f3b-4c6d-9e8f-a1b2c3d4e5f6';
/** What the fake upstream answers next, and what the last decoded request was. */
export const state: { script: Script; lastRequest: CanonicalRequest | undefined } = { script: {}, lastRequest: undefined };

const ROUTES: Record<string, ClientFormat> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/v1/messages': 'messages',
};

const handle = async (req: Request): Promise<Response> => {
  const format = ROUTES[new URL(req.url).pathname];
  if (!format) return new Response('not found', { status: 404 });
  const codec = codecFor(format);
  let canonical: CanonicalRequest;
  try {
    canonical = codec.decodeRequest(await req.json());
  } catch (e) {
    const err = asGatewayError(e);
    return Response.json(codec.encodeError(err), { status: err.status });
  }
  state.lastRequest = canonical;
  const ctx = { model: canonical.model, requestId: REQUEST_ID, includeUsage: canonical.includeUsage };
  if (!canonical.stream) {
    if (state.script.error) {
      const err = new GatewayError(state.script.error);
      return Response.json(codec.encodeError(err), { status: err.status });
    }
    if (!state.script.response) throw new Error('no scripted response');
    return Response.json(codec.encodeResponse(state.script.response, ctx));
  }
  const enc = codec.createStreamEncoder(ctx);
  const { events = [], error } = state.script;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder();
      // One enqueue per encoder call, as the data plane will write them.
      for (const e of events) {
        const out = enc.push(e);
        if (out) controller.enqueue(bytes.encode(out));
      }
      controller.enqueue(bytes.encode(error ? enc.error(new GatewayError(error)) : enc.end()));
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
};

/** Starts the server on a free port; the caller stops it. */
export const startServer = (): ReturnType<typeof Bun.serve> => Bun.serve({ port: 0, fetch: handle });

export const canonicalResponse = (name: string): CanonicalResponse =>
  readJson(`${FIXTURES}/canonical/responses/${name}.json`) as CanonicalResponse;
export const streamScript = (name: string): Script => {
  const f: StreamFixture = loadStreamFixture(name);
  return f.error ? { events: f.events, error: f.error } : { events: f.events };
};
