/**
 * A mock Gemini (AI Studio) upstream speaking the real `generateContent` wire: JSON answers,
 * `streamGenerateContent?alt=sse` chunks and `countTokens`. It records what the gateway sent and
 * answers `gemini says: <last user text>`, or a whole `functionCall` for "call NAME ARGS".
 */
import type { Recorded } from './mock-upstreams.ts';

export interface MockGemini {
  url: string;
  requests: Recorded[];
  stop(): void;
}

type Json = Record<string, unknown>;

const lastUserText = (body: Json): string => {
  const contents = (body.contents as { role?: string; parts?: Json[] }[] | undefined) ?? [];
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c?.role === 'model') continue;
    const text = (c?.parts ?? []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
    if (text !== '') return text;
  }
  return '';
};

const USAGE = { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 };

const chunk = (model: string, parts: Json[], last: boolean): Json => ({
  candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
  ...(last ? { usageMetadata: USAGE } : {}),
  modelVersion: model,
  responseId: 'gem-resp-1',
});

export const startMockGemini = (): MockGemini => {
  const requests: Recorded[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const { pathname: path, search } = new URL(req.url);
      const body = (await req.json().catch(() => ({}))) as Json;
      requests.push({ path, search, headers: Object.fromEntries(req.headers.entries()), body });
      const m = /\/models\/([^:]+):(\w+)$/.exec(path);
      if (!m) return Response.json({ error: { code: 404, message: 'not found', status: 'NOT_FOUND' } }, { status: 404 });
      const [, model = '', method] = m;
      if (method === 'countTokens') return Response.json({ totalTokens: 42 });
      const text = lastUserText(body);
      const call = /^call (\w+) (\{.*\})$/.exec(text);
      const parts: Json[] = call
        ? [{ functionCall: { name: call[1], args: JSON.parse(call[2] ?? '{}') } }]
        : [{ text: `gemini says: ${text}` }];
      if (method === 'generateContent') return Response.json(chunk(model, parts, true));
      const words = call ? [] : `gemini says: ${text}`.split(/(?<= )/);
      const frames = [...words.map((w) => chunk(model, [{ text: w }], false)), chunk(model, call ? parts : [], true)].map(
        (c) => `data: ${JSON.stringify(c)}\r\n\r\n`,
      );
      return new Response(frames.join(''), { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
};
