import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CardError, fetchCard, gatewayCard, MAX_CARD_BYTES } from '../src/a2a/card.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * Agent cards as the catalog takes them (contract §12 bad input): what is not a card, a card over
 * 1 MiB, a redirect, an address that cannot be fetched, an inward address without the allowance —
 * each a clear error naming `cardUrl`, and nothing stored; and the gateway's rewrite of a v0.3 card.
 */

const V1 = { name: 'Card', supportedInterfaces: [{ url: 'http://127.0.0.1:9/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] };
let tg: TestGateway;
let cards: ReturnType<typeof Bun.serve>;
let base = '';

beforeAll(async () => {
  cards = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === '/slow') {
        await Bun.sleep(1_500);
        return Response.json(V1);
      }
      if (path === '/html') return new Response('<html>hello</html>', { headers: { 'content-type': 'text/html' } });
      if (path === '/nameless') return Response.json({ supportedInterfaces: V1.supportedInterfaces });
      if (path === '/rest-only')
        return Response.json({ name: 'x', supportedInterfaces: [{ url: 'http://a/', protocolBinding: 'HTTP+JSON' }] });
      if (path === '/huge') return Response.json({ ...V1, description: 'x'.repeat(MAX_CARD_BYTES) });
      if (path === '/redirect') return Response.redirect('http://169.254.169.254/latest/meta-data', 302);
      if (path === '/v1') return Response.json(V1);
      return new Response('missing', { status: 404 });
    },
  });
  base = `http://127.0.0.1:${cards.port}`;
  tg = await startTestGateway();
}, 90_000);

afterAll(async () => {
  await tg?.stop();
  cards?.stop(true);
});

describe('the card is fetched before the write transaction, never inside it', () => {
  test('while CreateA2aAgent and RefreshA2aAgent wait 1.5 s for a slow card, other management writes go through', async () => {
    const write = async (customerId: string): Promise<number> => {
      await Bun.sleep(200);
      const t0 = performance.now();
      await tg.must(admin('CreateCustomer'), { customerId, name: customerId });
      return performance.now() - t0;
    };
    const t0 = performance.now();
    const [created, ms] = await Promise.all([
      tg.call(admin('CreateA2aAgent'), { agentId: 'slow', cardUrl: `${base}/slow` }),
      write('c-create'),
    ]);
    expect(created.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1_400);
    // Inside the transaction (the old code) this write waited for the card: ~1.3 s.
    expect(ms).toBeLessThan(700);
    const [refreshed, ms2] = await Promise.all([tg.call(admin('RefreshA2aAgent'), { agentId: 'slow' }), write('c-refresh')]);
    expect(refreshed.status).toBe(200);
    expect(ms2).toBeLessThan(700);
    await tg.must(admin('DeleteA2aAgent'), { agentId: 'slow' });
  });
});

describe('CreateA2aAgent refuses what is not a usable card, naming cardUrl, storing nothing', () => {
  const cases: [string, string, number, RegExp][] = [
    ['an HTML page', '/html', 400, /not JSON/],
    ['JSON without a name', '/nameless', 400, /no 'name'/],
    ['a card without a JSON-RPC interface', '/rest-only', 400, /no JSON-RPC interface/],
    ['a card over 1 MiB', '/huge', 400, /larger than 1048576 bytes/],
    ['a redirect (never followed: it could lead inward)', '/redirect', 400, /redirect \(302\)/],
    ['an HTTP error', '/missing', 400, /HTTP 404/],
  ];
  for (const [what, path, status, message] of cases)
    test(what, async () => {
      const r = await tg.call(admin('CreateA2aAgent'), { agentId: 'bad', cardUrl: `${base}${path}` });
      expect(r.status).toBe(status);
      expect(String(r.body.message)).toMatch(message);
      expect(String(r.body.message)).toContain("'cardUrl'");
      expect((await tg.call(admin('GetA2aAgent'), { agentId: 'bad' })).status).toBe(404);
    });

  test('nothing listening: failed_precondition', async () => {
    const r = await tg.call(admin('CreateA2aAgent'), { agentId: 'bad', cardUrl: 'http://127.0.0.1:9/card.json' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('failed_precondition');
  });
});

describe('the fetch itself', () => {
  test('an inward card URL without the allowance is refused before any connection', async () => {
    const e = await fetchCard(`${base}/v1`, false).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CardError);
    expect(e instanceof CardError && e.reason).toBe('inward');
    expect(e instanceof Error && e.message).toContain('loopback');
  });

  test('a hanging card URL is cut at the time-out', async () => {
    const hang = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Promise<Response>(() => undefined) });
    try {
      const t0 = performance.now();
      const e = await fetchCard(`http://127.0.0.1:${hang.port}/`, true, 200).catch((x: unknown) => x);
      expect(e instanceof CardError && e.reason).toBe('unreachable');
      expect(performance.now() - t0).toBeLessThan(3_000);
    } finally {
      hang.stop(true);
    }
  });

  test('a v0.3 card is rewritten to the gateway: url, transport, additional interfaces, the bearer scheme', () => {
    const card = gatewayCard(
      JSON.stringify({
        name: 'old',
        url: 'http://10.0.0.5/rpc',
        preferredTransport: 'JSONRPC',
        additionalInterfaces: [{ url: 'http://10.0.0.5/rest', transport: 'HTTP+JSON' }],
        securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } },
        security: [{ key: [] }],
        signatures: [{ protected: 'x', signature: 'y' }],
      }),
      'https://gw.example/a2a/old',
    );
    expect(card).toEqual({
      name: 'old',
      url: 'https://gw.example/a2a/old',
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [{ url: 'https://gw.example/a2a/old', transport: 'JSONRPC' }],
      securitySchemes: { gateway: { type: 'http', scheme: 'bearer', description: 'an API key or user token of the project' } },
      security: [{ gateway: [] }],
    });
  });
});
