import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream, Scripted } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Contract §14, client abort: a client that goes away after its request was sent upstream is
 * charged what the provider bills — the input, and the output received so far — never $0 and never
 * the whole reservation when part of the answer arrived. (Before: an abandoned non-streamed request
 * and a stream aborted before its first byte were charged $0; an aborted OpenAI-family stream,
 * whose usage comes only at its end, was charged its whole reservation.)
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;

const BEHAVIOUR: Record<string, Scripted> = {
  slow: { text: 'late', delayMs: 1500, usage: { input: 9, output: 1 } },
  dribble: { text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 150, usage: { input: 9, output: 16 } },
};
const MAX_TOKENS = 4000;

interface Rec {
  errorCode?: string;
  usage: { promptTokens: number; completionTokens: number };
  cost: string;
}

beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, p } = world);
  oa.script((r) => BEHAVIOUR[String(r.body.model)] ?? { text: 'ok', usage: { input: 5, output: 3 } });
  for (const model of ['a-slow', 'a-dribble']) {
    const m = (await tg.must(admin('CreateModel'), { model, provider: 'openai', inputPricePerMillion: 1, outputPricePerMillion: 2 })) as {
      model: { id: string };
    };
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      model,
      targets: [{ connection: 'mock-openai', model: model.slice(2) }],
    });
  }
}, 60_000);

afterAll(() => stopWorld(world));

/** Sends a request, lets `abortAfter` decide when the client goes away, and returns its record. */
const abandon = async (model: string, stream: boolean, abortAfter: (res: Promise<Response>) => Promise<void>): Promise<Rec> => {
  const ac = new AbortController();
  const clientId = `abandon-${crypto.randomUUID()}`;
  const res = fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': clientId },
    body: JSON.stringify({
      model,
      stream,
      max_tokens: MAX_TOKENS,
      messages: [{ role: 'user', content: 'Tell me a long story about gateways.' }],
    }),
    signal: ac.signal,
  });
  res.catch(() => undefined);
  await abortAfter(res);
  ac.abort();
  for (let i = 0; i < 100; i++) {
    await Bun.sleep(30);
    await tg.gw.records.flush();
    const found = (await tg.must(admin('SearchRequestRecords'), { clientRequestId: clientId })) as { records: Rec[] };
    if (found.records[0]) return found.records[0];
  }
  throw new Error(`no record for ${clientId}`);
};

describe('a client that goes away is charged what the provider bills', () => {
  test('an abandoned non-streamed request is charged its input (not $0)', async () => {
    const r = await abandon('a-slow', false, () => Bun.sleep(200));
    expect(r.errorCode).toBe('client_closed');
    expect(r.usage.promptTokens).toBeGreaterThan(0);
    expect(r.usage.completionTokens).toBe(0);
    expect(Number(r.cost)).toBeGreaterThan(0);
  });

  test('a stream abandoned before its first byte is charged its input (not $0)', async () => {
    const r = await abandon('a-slow', true, async () => {
      await Bun.sleep(200);
    });
    expect(r.errorCode).toBe('client_closed');
    expect(r.usage.promptTokens).toBeGreaterThan(0);
    expect(r.usage.completionTokens).toBe(0);
    expect(Number(r.cost)).toBeGreaterThan(0);
  });

  test('an OpenAI-family stream abandoned midway is charged the input and what was streamed, not its reservation', async () => {
    const before = oa.cancelled;
    let received = '';
    const r = await abandon('a-dribble', true, async (res) => {
      const reader = (await res).body?.getReader();
      const td = new TextDecoder();
      while (!received.includes('"content":"c')) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) break;
        received += td.decode(chunk.value);
      }
    });
    expect(received).toContain('"content":"a');
    expect(r.errorCode).toBe('client_closed');
    expect(r.usage.promptTokens).toBeGreaterThan(0);
    // What was streamed (a few one-character words), far from the 4,000 tokens reserved.
    expect(r.usage.completionTokens).toBeGreaterThan(0);
    expect(r.usage.completionTokens).toBeLessThan(40);
    expect(Number(r.cost)).toBeGreaterThan(0);
    // The upstream request was cancelled (its stream saw the cancel).
    for (let i = 0; i < 50 && oa.cancelled === before; i++) await Bun.sleep(10);
    expect(oa.cancelled).toBeGreaterThan(before);
  });
});
