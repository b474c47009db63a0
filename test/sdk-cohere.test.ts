import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CohereClientV2, CohereError } from 'cohere-ai';
import { addNativeUpstream, lastSentTo, type NativeUpstream, upstreamsOf } from './support/native-upstream.ts';
import { type MockCohere, startMockCohere } from './support/mock-cohere.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * `cohere-ai`'s CohereClientV2, unmodified (`environment` = the gateway), against the OpenAI and
 * Anthropic mock upstreams (translated) and a Cohere mock upstream (same format: the body passes
 * through with only the model changed). Contract §13.
 */

let w: World;
let native: NativeUpstream;
let co: MockCohere;
let client: CohereClientV2;

beforeAll(async () => {
  w = await startWorld();
  co = startMockCohere();
  native = {
    baseUrl: co.url,
    requests: co.requests,
    provider: 'cohere',
    connection: 'mock-cohere',
    apiKey: 'co-upstream-secret',
    model: 'command',
    upstreamModel: 'command-r-plus',
  };
  await addNativeUpstream(w, native);
  client = new CohereClientV2({ token: w.p.apiKey, environment: w.tg.url });
}, 60_000);
afterAll(async () => {
  co.stop();
  await stopWorld(w);
});

const lastSent = (family: string) => lastSentTo(w, native, family);

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

for (const u of upstreamsOf('command', 'cohere')) {
  describe(`CohereClientV2 → ${u.family} upstream`, () => {
    test('chat: text, system, exact usage, finish reason', async () => {
      const r = await client.chat({
        model: u.model,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ],
      });
      const first = r.message.content?.[0];
      expect(first?.type === 'text' ? first.text : undefined).toBe(`${u.family} says: hello there`);
      expect(r.finishReason).toBe('COMPLETE');
      expect(r.usage?.tokens).toMatchObject({ inputTokens: 12, outputTokens: 7 });
      const sent = lastSent(u.family);
      if (u.family === 'cohere') {
        expect(sent.path).toBe('/v2/chat');
        expect(sent.headers.authorization).toBe('Bearer co-upstream-secret');
        expect(sent.body).toEqual({
          model: 'command-r-plus',
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: 'hello there' },
          ],
          stream: false,
        });
      } else if (u.family === 'openai')
        expect(sent.body.messages).toEqual([
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ]);
      else expect(sent.body.system).toBe('be brief');
    });

    test('chatStream: content deltas, message-end with finish and usage', async () => {
      const stream = await client.chatStream({ model: u.model, messages: [{ role: 'user', content: 'stream me words' }] });
      let text = '';
      let finish: string | undefined;
      let usage: unknown;
      let events = 0;
      for await (const e of stream) {
        events++;
        if (e.type === 'content-delta') text += e.delta?.message?.content?.text ?? '';
        if (e.type === 'message-end') {
          finish = e.delta?.finishReason;
          usage = e.delta?.usage?.tokens;
        }
      }
      expect(events).toBeGreaterThan(4);
      expect(text).toBe(`${u.family} says: stream me words`);
      expect(finish).toBe('COMPLETE');
      expect(usage).toMatchObject({ inputTokens: 12, outputTokens: 7 });
    });

    test('tools: a streamed call with argument deltas, then the tool result turn', async () => {
      const stream = await client.chatStream({
        model: u.model,
        messages: [{ role: 'user', content: 'call get_weather {"city":"Paris"}' }],
        tools: [weather],
      });
      const calls: { id: string; name: string; args: string }[] = [];
      let finish: string | undefined;
      for await (const e of stream) {
        if (e.type === 'tool-call-start') {
          const c = e.delta?.message?.toolCalls;
          calls.push({ id: c?.id ?? '', name: c?.function?.name ?? '', args: c?.function?.arguments ?? '' });
        }
        const last = calls.at(-1);
        if (e.type === 'tool-call-delta' && last) last.args += e.delta?.message?.toolCalls?.function?.arguments ?? '';
        if (e.type === 'message-end') finish = e.delta?.finishReason;
      }
      expect(calls.map((c) => ({ name: c.name, args: JSON.parse(c.args) }))).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
      expect(finish).toBe('TOOL_CALL');
      const id = calls[0]?.id ?? '';
      const r = await client.chat({
        model: u.model,
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', toolCalls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', toolCallId: id, content: '{"temp":21}' },
          { role: 'user', content: 'thanks' },
        ],
        tools: [weather],
      });
      const first = r.message.content?.[0];
      // The Anthropic mock answers a turn that carries a tool result with that result.
      expect(first?.type === 'text' ? first.text : undefined).toBe(
        u.family === 'anthropic' ? 'tool said: {"temp":21}' : `${u.family} says: thanks`,
      );
      const sent = lastSent(u.family);
      if (u.family === 'openai')
        expect((sent.body.messages as Record<string, unknown>[])[2]).toMatchObject({
          role: 'tool',
          tool_call_id: id,
          content: '{"temp":21}',
        });
    });
  });
}

describe("Cohere refusals in Cohere's shape", () => {
  test('an unknown field and a native-only field are 400s with a message naming them; nothing sent', async () => {
    const before = w.oa.requests.length;
    const res = await fetch(`${w.tg.url}/v2/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'x' }], top_p: 1 }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain('top_p');
    const e = await client.chat({ model: 'gpt-mini', messages: [{ role: 'user', content: 'x' }], safetyMode: 'STRICT' }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CohereError);
    expect((e as CohereError).statusCode).toBe(400);
    expect(JSON.stringify((e as CohereError).body)).toContain('safety_mode');
    expect(w.oa.requests.length).toBe(before);
  });
});
