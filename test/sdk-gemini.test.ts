import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { FinishReason, GoogleGenAI, Type } from '@google/genai';
import { addNativeUpstream, lastSentTo, type NativeUpstream, upstreamsOf } from './support/native-upstream.ts';
import { type MockGemini, startMockGemini } from './support/mock-gemini.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * `@google/genai`, unmodified (`httpOptions.baseUrl` = the gateway), against the OpenAI and
 * Anthropic mock upstreams (translated) and a Gemini mock upstream (same format: the body passes
 * through as sent). Contract §13.
 */

let w: World;
let native: NativeUpstream;
let gm: MockGemini;
let ai: GoogleGenAI;

beforeAll(async () => {
  w = await startWorld();
  gm = startMockGemini();
  native = {
    baseUrl: `${gm.url}/v1beta`,
    requests: gm.requests,
    provider: 'gemini',
    connection: 'mock-gemini',
    apiKey: 'gm-upstream-secret',
    model: 'gem-flash',
    upstreamModel: 'gemini-2.5-flash',
  };
  await addNativeUpstream(w, native);
  ai = new GoogleGenAI({ apiKey: w.p.apiKey, httpOptions: { baseUrl: w.tg.url } });
}, 60_000);
afterAll(async () => {
  gm.stop();
  await stopWorld(w);
});

const lastSent = (family: string) => lastSentTo(w, native, family);

const weather = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
    },
  ],
};

for (const u of upstreamsOf('gem-flash', 'gemini')) {
  describe(`@google/genai → ${u.family} upstream`, () => {
    test('generateContent: text, systemInstruction, exact usageMetadata, the client model', async () => {
      const r = await ai.models.generateContent({ model: u.model, contents: 'hello there', config: { systemInstruction: 'be brief' } });
      expect(r.text).toBe(`${u.family} says: hello there`);
      expect(r.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
      expect(r.usageMetadata).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 });
      expect(r.modelVersion).toBe(u.model);
      const sent = lastSent(u.family);
      if (u.family === 'gemini') {
        // Same format: the body as the SDK wrote it, the model in the URL, the connection's key.
        expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
        expect(sent.headers['x-goog-api-key']).toBe('gm-upstream-secret');
        expect(sent.body).toEqual({
          contents: [{ parts: [{ text: 'hello there' }], role: 'user' }],
          systemInstruction: { parts: [{ text: 'be brief' }], role: 'user' },
          generationConfig: {},
        });
      } else if (u.family === 'openai') {
        expect(sent.body.messages).toEqual([
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ]);
      } else {
        expect(sent.body.system).toBe('be brief');
      }
    });

    test('multi-turn, streamed: chunks of text, the finish and usage in the last one', async () => {
      const stream = await ai.models.generateContentStream({
        model: u.model,
        contents: [
          { role: 'user', parts: [{ text: 'hi' }] },
          { role: 'model', parts: [{ text: 'hello' }] },
          { role: 'user', parts: [{ text: 'stream me words' }] },
        ],
      });
      let text = '';
      let chunks = 0;
      let last: Awaited<ReturnType<typeof ai.models.generateContent>> | undefined;
      for await (const c of stream) {
        chunks++;
        text += c.text ?? '';
        last = c;
      }
      expect(chunks).toBeGreaterThan(2);
      expect(text).toBe(`${u.family} says: stream me words`);
      expect(last?.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
      expect(last?.usageMetadata).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 });
      const sent = lastSent(u.family);
      if (u.family === 'gemini') expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
      else expect(sent.body.stream).toBe(true);
    });

    test('function declarations and calls, streamed (the call arrives whole, arguments assembled)', async () => {
      const stream = await ai.models.generateContentStream({
        model: u.model,
        contents: 'call get_weather {"city":"Paris"}',
        config: { tools: [weather] },
      });
      const calls: { name?: string; args?: Record<string, unknown> }[] = [];
      for await (const c of stream) for (const f of c.functionCalls ?? []) calls.push({ name: f.name, args: f.args });
      expect(calls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
      const sent = lastSent(u.family);
      if (u.family === 'openai')
        expect((sent.body.tools as { function: { parameters: unknown } }[])[0]?.function.parameters).toEqual({
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        });
    });

    test('a function result in the next turn reaches the upstream as a tool result', async () => {
      const r = await ai.models.generateContent({
        model: u.model,
        contents: [
          { role: 'user', parts: [{ text: 'weather?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }, { text: 'thanks' }] },
        ],
        config: { tools: [weather] },
      });
      // The Anthropic mock answers a turn that carries a tool result with that result.
      expect(r.text).toBe(u.family === 'anthropic' ? 'tool said: {"temp":21}' : `${u.family} says: thanks`);
      const sent = lastSent(u.family);
      if (u.family === 'openai') {
        const msgs = sent.body.messages as { role: string; tool_call_id?: string; content?: unknown; tool_calls?: { id: string }[] }[];
        expect(msgs[2]).toMatchObject({ role: 'tool', content: '{"temp":21}' });
        expect(msgs[2]?.tool_call_id).toBe(msgs[1]?.tool_calls?.[0]?.id);
      }
    });

    test('responseMimeType + responseSchema reach the upstream as a JSON schema', async () => {
      await ai.models.generateContent({
        model: u.model,
        contents: 'a city',
        config: {
          responseMimeType: 'application/json',
          responseSchema: { type: Type.OBJECT, properties: { name: { type: Type.STRING } }, required: ['name'] },
        },
      });
      const sent = lastSent(u.family);
      const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
      if (u.family === 'openai')
        expect((sent.body.response_format as { json_schema: { schema: unknown } }).json_schema.schema).toEqual(schema);
      else if (u.family === 'anthropic') expect(JSON.stringify(sent.body)).toContain('"name":{"type":"string"}');
      else expect((sent.body.generationConfig as { responseSchema: unknown }).responseSchema).toBeDefined();
    });

    test("an output limit above the catalog's maxOutputTokens is clamped (also in a body passed through)", async () => {
      await ai.models.generateContent({ model: u.model, contents: 'long please', config: { maxOutputTokens: 100_000 } });
      const sent = lastSent(u.family);
      const limit =
        u.family === 'gemini'
          ? (sent.body.generationConfig as { maxOutputTokens: number }).maxOutputTokens
          : (sent.body.max_tokens ?? sent.body.max_completion_tokens);
      expect(limit).toBe(u.family === 'gemini' ? 8192 : 16384);
    });

    test('countTokens answers totalTokens (the Gemini upstream counts, others are estimated)', async () => {
      const r = await ai.models.countTokens({ model: u.model, contents: 'how many tokens is this' });
      if (u.family === 'gemini') expect(r.totalTokens).toBe(42);
      else expect(r.totalTokens).toBeGreaterThan(0);
    });
  });
}

describe('Gemini auth and refusals in Google shape', () => {
  const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  test('?key= and Bearer are accepted as well as x-goog-api-key', async () => {
    const byQuery = await fetch(`${w.tg.url}/v1beta/models/gpt-mini:generateContent?key=${w.p.apiKey}`, { method: 'POST', body });
    expect(byQuery.status).toBe(200);
    const byBearer = await fetch(`${w.tg.url}/v1/models/gpt-mini:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.p.apiKey}` },
      body,
    });
    expect(byBearer.status).toBe(200);
  });

  test('a wrong key, an unknown field and a native-only field: {error:{code,message,status}}, nothing sent', async () => {
    const before = w.oa.requests.length;
    const bad = await fetch(`${w.tg.url}/v1beta/models/gpt-mini:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'sk-wrong' },
      body,
    });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { status: string; code: number } }).error).toMatchObject({
      code: 401,
      status: 'UNAUTHENTICATED',
    });
    const unknown = await ai.models.generateContent({ model: 'gpt-mini', contents: 'x', config: { safetySettings: [] } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(unknown)).toContain('safetySettings');
    const res = await fetch(`${w.tg.url}/v1beta/models/gpt-mini:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': w.p.apiKey },
      body: JSON.stringify({ contents: [], temperature: 1 }),
    });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { code: number; status: string; message: string } }).error;
    expect(err).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(err.message).toContain('temperature');
    expect(w.oa.requests.length).toBe(before);
  });
});
