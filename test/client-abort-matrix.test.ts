import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream, Scripted } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Contract §14, client abort: on every client format (Chat Completions, Responses, Messages) and
 * upstream family (OpenAI, Anthropic), a client that goes away mid-stream has the upstream's
 * connection closed within 100 ms — the mock sees its response stream cancelled — and is charged
 * what was produced (never $0). The matrix (format × family, ms to upstream close, charge) is
 * printed in the test log.
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let p: Provisioned;

const DRIBBLE: Scripted = { text: 'a b c d e f g h i j k l m n o p q r s t', chunkDelayMs: 300, usage: { input: 9, output: 20 } };
const FAMILIES = { openai: 'ab-openai', anthropic: 'ab-anthropic' } as const;
const FORMATS = {
  chat: (model: string) => ({
    path: '/v1/chat/completions',
    body: { model, stream: true, messages: [{ role: 'user', content: 'tell a story' }] },
  }),
  responses: (model: string) => ({ path: '/v1/responses', body: { model, stream: true, input: 'tell a story' } }),
  messages: (model: string) => ({
    path: '/v1/messages',
    body: { model, stream: true, max_tokens: 500, messages: [{ role: 'user', content: 'tell a story' }] },
  }),
} as const;

beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, an, p } = world);
  oa.script(() => DRIBBLE);
  an.script(() => DRIBBLE);
  for (const [provider, model] of Object.entries(FAMILIES)) {
    const m = (await tg.must(admin('CreateModel'), { model, provider, inputPricePerMillion: 1, outputPricePerMillion: 2 })) as {
      model: { id: string };
    };
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      model,
      targets: [{ connection: `mock-${provider}`, model: provider === 'openai' ? 'gpt-dribble' : 'claude-dribble' }],
    });
  }
}, 60_000);

afterAll(() => stopWorld(world));

const recordOf = async (clientId: string): Promise<{ errorCode?: string; cost: string }> => {
  for (let i = 0; i < 100; i++) {
    await tg.gw.records.flush();
    const found = (await tg.must(admin('SearchRequestRecords'), { clientRequestId: clientId })) as {
      records: { errorCode?: string; cost: string }[];
    };
    if (found.records[0]) return found.records[0];
    await Bun.sleep(30);
  }
  throw new Error(`no record for ${clientId}`);
};

describe('a client that goes away mid-stream: upstream closed within 100 ms, charged what was produced', () => {
  const matrix: string[] = [];
  afterAll(() =>
    console.log(`client abort matrix (format × family: ms from client abort to upstream close, charge):\n${matrix.join('\n')}`),
  );
  for (const format of Object.keys(FORMATS) as (keyof typeof FORMATS)[]) {
    for (const family of Object.keys(FAMILIES) as (keyof typeof FAMILIES)[]) {
      test(`${format} × ${family}`, async () => {
        const upstream = family === 'openai' ? oa : an;
        const { path, body } = FORMATS[format](FAMILIES[family]);
        const clientId = `abort-${format}-${family}-${crypto.randomUUID()}`;
        const ac = new AbortController();
        const before = upstream.cancelled;
        const res = await fetch(`${tg.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': clientId },
          body: JSON.stringify(body),
          signal: ac.signal,
        });
        expect(res.status).toBe(200);
        const reader = res.body?.getReader();
        await reader?.read();
        const t0 = performance.now();
        ac.abort();
        let ms = -1;
        for (let i = 0; i < 500; i++) {
          if (upstream.cancelled > before) {
            ms = performance.now() - t0;
            break;
          }
          await Bun.sleep(1);
        }
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThan(100);
        const rec = await recordOf(clientId);
        expect(rec.errorCode).toBe('client_closed');
        expect(Number(rec.cost)).toBeGreaterThan(0);
        matrix.push(`${format.padEnd(9)} × ${family.padEnd(9)}  ${ms.toFixed(1).padStart(5)} ms  $${rec.cost}`);
      });
    }
  }
});
