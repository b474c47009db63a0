import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ConverseStreamOutput,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { addNativeUpstream, lastSentTo, type NativeUpstream, upstreamsOf } from './support/native-upstream.ts';
import { type MockBedrock, startMockBedrock } from './support/mock-bedrock.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * `@aws-sdk/client-bedrock-runtime`, unmodified (`endpoint` = the gateway, a bearer token, the
 * SDK's HTTP/1.1 NodeHttpHandler), against the OpenAI and Anthropic mock upstreams (translated)
 * and a Bedrock mock upstream (same format: the body passes through as sent). Contract §13.
 */

let w: World;
let native: NativeUpstream;
let br: MockBedrock;
let client: BedrockRuntimeClient;

beforeAll(async () => {
  w = await startWorld();
  br = startMockBedrock();
  native = {
    baseUrl: br.url,
    requests: br.requests,
    provider: 'bedrock',
    connection: 'mock-bedrock',
    apiKey: 'br-upstream-secret',
    options: { region: 'us-east-1' },
    model: 'nova-lite',
    upstreamModel: 'amazon.nova-lite-v1:0',
  };
  await addNativeUpstream(w, native);
  client = new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: w.tg.url,
    token: { token: w.p.apiKey },
    authSchemePreference: ['httpBearerAuth'],
    requestHandler: new NodeHttpHandler(),
    maxAttempts: 1,
  });
}, 60_000);
afterAll(async () => {
  client.destroy();
  br.stop();
  await stopWorld(w);
});

const lastSent = (family: string) => lastSentTo(w, native, family);

const weather = {
  tools: [
    {
      toolSpec: {
        name: 'get_weather',
        description: 'Weather for a city',
        inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      },
    },
  ],
};

const collect = async (events: AsyncIterable<ConverseStreamOutput> | undefined) => {
  const out = { text: '', calls: [] as { id?: string; name?: string; input: string }[], stop: '', usage: {} as object, frames: 0 };
  for await (const e of events ?? []) {
    out.frames++;
    if (e.contentBlockStart?.start?.toolUse)
      out.calls.push({ id: e.contentBlockStart.start.toolUse.toolUseId, name: e.contentBlockStart.start.toolUse.name, input: '' });
    if (e.contentBlockDelta?.delta?.text) out.text += e.contentBlockDelta.delta.text;
    const input = e.contentBlockDelta?.delta?.toolUse?.input;
    const last = out.calls.at(-1);
    if (input && last) last.input += input;
    if (e.messageStop) out.stop = String(e.messageStop.stopReason);
    if (e.metadata?.usage) out.usage = e.metadata.usage;
  }
  return out;
};

for (const u of upstreamsOf('nova-lite', 'bedrock')) {
  describe(`Converse SDK → ${u.family} upstream`, () => {
    test('ConverseCommand: text, system, exact usage, stop reason', async () => {
      const r = await client.send(
        new ConverseCommand({
          modelId: u.model,
          system: [{ text: 'be brief' }],
          messages: [{ role: 'user', content: [{ text: 'hello there' }] }],
          inferenceConfig: { maxTokens: 100 },
        }),
      );
      expect(r.output?.message?.content?.[0]?.text).toBe(`${u.family} says: hello there`);
      expect(r.stopReason).toBe('end_turn');
      expect(r.usage).toMatchObject({ inputTokens: 12, outputTokens: 7, totalTokens: 19 });
      const sent = lastSent(u.family);
      if (u.family === 'bedrock') {
        expect(sent.path).toBe('/model/amazon.nova-lite-v1%3A0/converse');
        expect(sent.headers.authorization).toBe('Bearer br-upstream-secret');
        expect(sent.body).toEqual({
          system: [{ text: 'be brief' }],
          messages: [{ role: 'user', content: [{ text: 'hello there' }] }],
          inferenceConfig: { maxTokens: 100 },
        });
      } else if (u.family === 'openai')
        expect(sent.body.messages).toEqual([
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ]);
      else expect(sent.body.system).toBe('be brief');
    });

    test('ConverseStreamCommand: event-stream text deltas, messageStop, metadata usage', async () => {
      const r = await client.send(
        new ConverseStreamCommand({ modelId: u.model, messages: [{ role: 'user', content: [{ text: 'stream me words' }] }] }),
      );
      const got = await collect(r.stream);
      expect(got.text).toBe(`${u.family} says: stream me words`);
      expect(got.stop).toBe('end_turn');
      expect(got.usage).toMatchObject({ inputTokens: 12, outputTokens: 7, totalTokens: 19 });
      expect(got.frames).toBeGreaterThan(4);
    });

    test('tool use streamed with argument deltas, then the tool result turn', async () => {
      const r = await client.send(
        new ConverseStreamCommand({
          modelId: u.model,
          messages: [{ role: 'user', content: [{ text: 'call get_weather {"city":"Paris"}' }] }],
          toolConfig: weather,
        }),
      );
      const got = await collect(r.stream);
      expect(got.calls.map((c) => ({ name: c.name, input: JSON.parse(c.input) }))).toEqual([
        { name: 'get_weather', input: { city: 'Paris' } },
      ]);
      expect(got.stop).toBe('tool_use');
      const id = got.calls[0]?.id ?? '';
      const next = await client.send(
        new ConverseCommand({
          modelId: u.model,
          messages: [
            { role: 'user', content: [{ text: 'call get_weather {"city":"Paris"}' }] },
            { role: 'assistant', content: [{ toolUse: { toolUseId: id, name: 'get_weather', input: { city: 'Paris' } } }] },
            { role: 'user', content: [{ toolResult: { toolUseId: id, content: [{ json: { temp: 21 } }] } }, { text: 'thanks' }] },
          ],
          toolConfig: weather,
        }),
      );
      expect(next.output?.message?.content?.[0]?.text).toBe(
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

test("Converse: an output limit above the catalog's maxOutputTokens is clamped in a body passed through", async () => {
  await client.send(
    new ConverseCommand({
      modelId: 'nova-lite',
      messages: [{ role: 'user', content: [{ text: 'x' }] }],
      inferenceConfig: { maxTokens: 100_000 },
    }),
  );
  expect(br.requests.at(-1)?.body.inferenceConfig).toEqual({ maxTokens: 8192 });
});

describe('Converse refusals in Bedrock shape', () => {
  test('an unknown field is a ValidationException naming it; a native-only field is refused for a translating upstream; nothing sent', async () => {
    const before = w.oa.requests.length;
    const res = await fetch(`${w.tg.url}/model/gpt-mini/converse`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'x' }] }], temperature: 1 }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ __type: 'ValidationException' });
    const refused = await client
      .send(
        new ConverseCommand({
          modelId: 'gpt-mini',
          messages: [{ role: 'user', content: [{ text: 'x' }] }],
          guardrailConfig: { guardrailIdentifier: 'g', guardrailVersion: '1' },
        }),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(ValidationException);
    expect(String((refused as Error).message)).toContain('guardrailConfig');
    expect(w.oa.requests.length).toBe(before);
  });

  test('a wrong key is refused before anything is sent', async () => {
    const bad = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: w.tg.url,
      token: { token: 'sk-wrong' },
      authSchemePreference: ['httpBearerAuth'],
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    const e = await bad.send(new ConverseCommand({ modelId: 'gpt-mini', messages: [{ role: 'user', content: [{ text: 'x' }] }] })).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect((e as { name?: string }).name).toBe('AccessDeniedException');
    expect((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(401);
    bad.destroy();
  });
});
