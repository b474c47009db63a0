import { Elysia } from 'elysia';
import { GatewayError, toInferenceBody } from '../core/errors.ts';

/**
 * The console's way to the inference listener (its playground, and the files and batches pages):
 * the page may only call its own origin (CSP `connect-src 'self'`), so the management listener
 * relays a few inference calls, as they are, to the inference listener of the same process. The
 * caller's API key goes through unchanged and the inference listener decides everything (auth,
 * routes, limits, records); the answer streams back as it arrives, with its `X-Request-ID`. A
 * management-only process (`--role control`) has no inference listener: it answers 503 saying so.
 */

/** What the console may relay: method and inference path. */
const RELAYED: ReadonlyArray<readonly [string, string]> = [
  ['POST', '/v1/chat/completions'],
  ['GET', '/v1/models'],
  ['GET', '/v1/files'],
  ['GET', '/v1/batches'],
];

const PREFIX = '/console/inference';

/** The headers of the answer the page may read (hop-by-hop and length headers are the runtime's). */
const KEPT = ['content-type', 'x-request-id', 'x-gateway-cache', 'retry-after', 'cache-control'];

const errorAnswer = (e: GatewayError): Response =>
  new Response(JSON.stringify(toInferenceBody(e)), { status: e.status, headers: { 'content-type': 'application/json' } });

/** `inferenceUrl`: the inference listener of this process (`http://127.0.0.1:8080`); absent in a management-only process. */
export const inferenceRelay = (inferenceUrl: string | undefined) =>
  new Elysia({ name: 'console-inference-relay' }).all(
    `${PREFIX}/*`,
    async ({ request }) => {
      const path = new URL(request.url).pathname.slice(PREFIX.length);
      if (!RELAYED.some(([m, p]) => m === request.method && p === path))
        return errorAnswer(
          new GatewayError({ kind: 'not_found', message: `the console relays only ${RELAYED.map(([m, p]) => `${m} ${p}`).join(', ')}` }),
        );
      if (!inferenceUrl)
        return errorAnswer(
          new GatewayError({
            kind: 'unavailable',
            message: 'this management listener runs without an inference listener (--role control): call the inference listener directly',
          }),
        );
      const headers = new Headers();
      for (const h of ['authorization', 'content-type', 'accept']) {
        const v = request.headers.get(h);
        if (v !== null) headers.set(h, v);
      }
      let upstream: Response;
      try {
        upstream = await fetch(`${inferenceUrl}${path}${new URL(request.url).search}`, {
          method: request.method,
          headers,
          ...(request.method === 'POST' ? { body: request.body } : {}),
          signal: request.signal,
          // The inference listener of this same process, on its own certificate.
          tls: { rejectUnauthorized: false },
        });
      } catch {
        return errorAnswer(new GatewayError({ kind: 'unavailable', message: 'the inference listener did not answer' }));
      }
      const out = new Headers();
      for (const h of KEPT) {
        const v = upstream.headers.get(h);
        if (v !== null) out.set(h, v);
      }
      return new Response(upstream.body, { status: upstream.status, headers: out });
    },
    { parse: 'none', detail: { hide: true } },
  );

/** The inference listener's URL as this process reaches it: a wildcard bind is reached on loopback. */
export const localInferenceUrl = (host: string, port: number, tls: boolean): string => {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `${tls ? 'https' : 'http'}://${h}:${port}`;
};
