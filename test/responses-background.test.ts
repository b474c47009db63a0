import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { admin } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Responses `background: true` (issue 26 defect 4) through the official `openai` SDK, for both
 * upstream families (gpt-mini: OpenAI's Responses API natively; claude-mini: translated to
 * Anthropic): answered at once `queued`, polled to `completed`, cancelled (the upstream call is
 * aborted), streamed and resumed from a sequence number; `store: false` is refused.
 */

let w: World;
const UPSTREAMS = [
  ['gpt-mini', 'openai'],
  ['claude-mini', 'anthropic'],
] as const;
type Family = (typeof UPSTREAMS)[number][1];

beforeAll(async () => {
  w = await startWorld({ GATEWAY_BACKGROUND_LEASE: '3s' });
}, 60_000);
afterAll(() => stopWorld(w));

const sdk = () => new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
const upstream = (family: Family) => (family === 'openai' ? w.oa : w.an);

const records = async (query: Record<string, string>): Promise<Record<string, unknown>[]> => {
  for (let i = 0; i < 50; i++) {
    const found = ((await w.tg.must(admin('SearchRequestRecords'), query)) as { records: Record<string, unknown>[] }).records;
    if (found.length > 0) return found;
    await Bun.sleep(50);
  }
  return [];
};

/** Polls until the response leaves queued / in_progress; returns every status seen. */
const pollUntilDone = async (id: string, timeoutMs = 20_000) => {
  const seen: string[] = [];
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await sdk().responses.retrieve(id);
    if (seen.at(-1) !== r.status) seen.push(String(r.status));
    if (r.status !== 'queued' && r.status !== 'in_progress') return { response: r, seen };
    if (Date.now() > until) throw new Error(`still ${r.status} after ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
};

describe('Responses background: true', () => {
  for (const [model, family] of UPSTREAMS) {
    test(`answered queued at once, polled to completed (${family})`, async () => {
      upstream(family).script(() => ({ text: `${family} took its time`, delayMs: 600, usage: { input: 11, output: 7 } }));
      try {
        const t0 = performance.now();
        const { data: created, response: http } = await sdk()
          .responses.create({ model, input: 'think slowly', background: true })
          .withResponse();
        expect(performance.now() - t0).toBeLessThan(500);
        expect(created.status).toBe('queued');
        expect(created.background).toBe(true);
        expect(created.id).toMatch(/^resp_/);
        const { response, seen } = await pollUntilDone(created.id);
        expect(response.status).toBe('completed');
        expect(response.background).toBe(true);
        expect(response.output_text).toBe(`${family} took its time`);
        expect(seen).toContain('in_progress');
        expect(seen.at(-1)).toBe('completed');
        // Recorded as a foreground request is, once it ran: one record with the answer's usage.
        const requestId = http.headers.get('x-request-id') ?? '';
        const recorded = await records({ requestId });
        expect(recorded.length).toBe(1);
        expect(recorded[0]).toMatchObject({ endpoint: '/v1/responses', httpStatus: 200, usage: { promptTokens: 11, completionTokens: 7 } });
        expect(response.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
        // The upstream got the request once, without `background` (the gateway ran it).
        const sent = upstream(family).requests.at(-1)?.body ?? {};
        expect(sent.background).toBeUndefined();
        expect(JSON.stringify(sent)).toContain('think slowly');
        // It can be continued like any stored response.
        const next = await sdk().responses.create({ model, input: 'and then?', previous_response_id: created.id });
        expect(JSON.stringify(upstream(family).requests.at(-1)?.body)).toContain('think slowly');
        expect(next.status).toBe('completed');
      } finally {
        upstream(family).script(undefined);
      }
    });

    test(`cancel aborts the upstream call; cancelling again answers the same (${family})`, async () => {
      upstream(family).script(() => ({ text: 'never seen', delayMs: 10_000 }));
      try {
        const created = await sdk().responses.create({ model, input: 'a long job', background: true });
        const before = upstream(family).requests.length;
        // Wait until the gateway called the upstream.
        for (let i = 0; i < 100 && upstream(family).requests.length === before; i++) await Bun.sleep(20);
        const t0 = performance.now();
        const cancelled = await sdk().responses.cancel(created.id);
        expect(performance.now() - t0).toBeLessThan(3_000);
        expect(cancelled.status).toBe('cancelled');
        expect(cancelled.id).toBe(created.id);
        expect((await sdk().responses.retrieve(created.id)).status).toBe('cancelled');
        expect((await sdk().responses.cancel(created.id)).status).toBe('cancelled');
      } finally {
        upstream(family).script(undefined);
      }
    });

    test(`cancelling a streamed run cancels the upstream stream (${family})`, async () => {
      upstream(family).script(() => ({ text: Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 100 }));
      try {
        const cancelledBefore = upstream(family).cancelled;
        const stream = await sdk().responses.create({ model, input: 'a long stream', background: true, stream: true });
        let id = '';
        for await (const e of stream) {
          if (e.type === 'response.output_text.delta') break;
          if (e.type === 'response.created') id = e.response.id;
        }
        const cancelled = await sdk().responses.cancel(id);
        expect(cancelled.status).toBe('cancelled');
        for (let i = 0; i < 40 && upstream(family).cancelled === cancelledBefore; i++) await Bun.sleep(50);
        expect(upstream(family).cancelled).toBeGreaterThan(cancelledBefore);
        expect((await sdk().responses.retrieve(id)).status).toBe('cancelled');
      } finally {
        upstream(family).script(undefined);
      }
    });

    test(`stream: true with background streams and resumes from starting_after (${family})`, async () => {
      upstream(family).script(() => ({ text: 'one two three four five six', chunkDelayMs: 60 }));
      try {
        const stream = await sdk().responses.create({ model, input: 'count', background: true, stream: true });
        const first: ResponseStreamEvent[] = [];
        let id = '';
        for await (const e of stream) {
          first.push(e);
          if (e.type === 'response.created') id = e.response.id;
          if (first.length === 4) break; // the client goes away; the run goes on
        }
        expect(id).toMatch(/^resp_/);
        expect(first.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3]);
        const last = first.at(-1)?.sequence_number ?? 0;
        // Resumed with the raw wire: only the events after `starting_after`, to the end.
        const res = await fetch(`${w.tg.url}/v1/responses/${id}?stream=true&starting_after=${last}`, {
          headers: { authorization: `Bearer ${w.p.apiKey}` },
        });
        expect(res.headers.get('content-type')).toContain('text/event-stream');
        const events = (await res.text())
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map(
            (l) =>
              JSON.parse(l.slice(6)) as {
                type: string;
                sequence_number: number;
                delta?: string;
                response?: { status: string; output_text?: string };
              },
          );
        expect(events[0]?.sequence_number).toBe(last + 1);
        expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => last + 1 + i));
        const done = events.at(-1);
        expect(done?.type).toBe('response.completed');
        expect(done?.response?.status).toBe('completed');
        const text = [...first, ...events]
          .map((e) => ('delta' in e && typeof e.delta === 'string' && e.type === 'response.output_text.delta' ? e.delta : ''))
          .join('');
        expect(text).toBe('one two three four five six');
        // The SDK's own resume (responses.stream with response_id / starting_after) yields the same end.
        const resumed = sdk().responses.stream({ response_id: id, starting_after: last });
        const again: ResponseStreamEvent[] = [];
        for await (const e of resumed) again.push(e);
        expect(again[0]?.sequence_number).toBe(last + 1);
        expect((await resumed.finalResponse()).output_text).toBe('one two three four five six');
        expect((await sdk().responses.retrieve(id)).status).toBe('completed');
      } finally {
        upstream(family).script(undefined);
      }
    });

    test(`an upstream failure reads failed with the error (${family})`, async () => {
      upstream(family).script(() => ({
        status: 400,
        errorBody: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'the upstream said no' } }),
      }));
      try {
        const created = await sdk().responses.create({ model, input: 'fail please', background: true });
        const { response } = await pollUntilDone(created.id);
        expect(response.status).toBe('failed');
        expect(response.error?.message).toBeTruthy();
      } finally {
        upstream(family).script(undefined);
      }
    });
  }

  test('store: false with background is refused; cancel answers OpenAI does', async () => {
    const refused = await sdk()
      .responses.create({ model: 'claude-mini', input: 'x', background: true, store: false })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('background');

    const unknown = await sdk()
      .responses.cancel('resp_nope')
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);

    // A foreground response cannot be cancelled; a finished background one neither.
    const fg = await sdk().responses.create({ model: 'claude-mini', input: 'x' });
    expect(
      await sdk()
        .responses.cancel(fg.id)
        .catch((e: unknown) => (e as { status: number }).status),
    ).toBe(400);
    const bg = await sdk().responses.create({ model: 'claude-mini', input: 'x', background: true });
    expect((await pollUntilDone(bg.id)).response.status).toBe('completed');
    const late = await sdk()
      .responses.cancel(bg.id)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(OpenAI.BadRequestError);
    expect((late as Error).message).toContain('Cannot cancel a completed response');
  });

  test('a request the gateway refuses is refused at once, not queued', async () => {
    const res = await sdk()
      .responses.create({ model: 'no-such-model', input: 'x', background: true })
      .catch((e: unknown) => e);
    expect((res as { status: number }).status).toBe(404);
  });
});
