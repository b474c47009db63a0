import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest, ContentPart, Message } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import { anthropicAdapter } from './anthropic/index.ts';
import { createBedrockAdapter } from './bedrock/index.ts';
import { cohereAdapter } from './cohere/index.ts';
import { geminiAdapter } from './gemini/index.ts';
import { ollamaAdapter } from './ollama/index.ts';
import { openaiAdapter } from './openai.ts';
import type { HttpProviderAdapter, UpstreamTarget } from './types.ts';
import { vertexAdapter } from './vertex/index.ts';

/** How each family maps a canonical document (issue 26, defect 6), or refuses it naming the client's part. */

const PDF: ContentPart = {
  type: 'document',
  source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' },
  filename: 'My report (v2).pdf',
  param: 'messages.0.content.0',
};
const URL_DOC: ContentPart = { type: 'document', source: { kind: 'url', url: 'https://example.com/a.pdf' }, param: 'messages.0.content.0' };
const CSV: ContentPart = { type: 'document', source: { kind: 'base64', mediaType: 'text/csv', data: 'YSxi' }, param: 'input.0.content.0' };
const ASK: ContentPart = { type: 'text', text: 'read it' };

const req = (messages: Message[]): CanonicalRequest => ({ model: 'm', stream: false, includeUsage: false, messages });
const user = (...content: ContentPart[]): CanonicalRequest => req([{ role: 'user', content }]);
const toolResult = (doc: ContentPart): CanonicalRequest =>
  req([
    { role: 'user', content: [ASK] },
    { role: 'assistant', content: [], toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'c1', content: [doc] },
  ]);

const target = (provider: string, options: Record<string, string> = {}, apiKey = 'k', upstreamModel = 'model-x'): UpstreamTarget => ({
  upstreamModel,
  connection: { id: 'c', name: 'n', provider, apiKey, options },
});

const sentBody = (a: HttpProviderAdapter, r: CanonicalRequest, t: UpstreamTarget): Record<string, unknown> =>
  JSON.parse(a.buildRequest(r, t).body) as Record<string, unknown>;
const firstContent = (a: HttpProviderAdapter, r: CanonicalRequest, t: UpstreamTarget, key = 'messages'): unknown => {
  const body = sentBody(a, r, t);
  const first = (body[key] as { content?: unknown; parts?: unknown }[])[0];
  return first?.content ?? first?.parts;
};

const refusal = (f: () => unknown): { param: string | null; message: string } => {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError) {
      expect(e.status).toBe(400);
      return { param: e.param, message: e.message };
    }
    throw e;
  }
  throw new Error('expected a refusal');
};

describe('documents per family', () => {
  test('anthropic: base64 and URL document blocks; a document in a tool result; other media types refused', () => {
    const t = target('anthropic');
    expect(firstContent(anthropicAdapter, user(PDF, URL_DOC, ASK), t)).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'My report (v2).pdf' },
      { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
      { type: 'text', text: 'read it' },
    ]);
    const body = sentBody(anthropicAdapter, toolResult(PDF), t) as { messages: { content: { type: string; content?: unknown }[] }[] };
    expect(body.messages[2]?.content[0]).toMatchObject({ type: 'tool_result', content: [{ type: 'document' }] });
    expect(refusal(() => anthropicAdapter.buildRequest(user(CSV), t))).toMatchObject({ param: 'input.0.content.0' });
  });

  test('openai (Chat Completions): base64 as a file part; URL, tool-result documents refused', () => {
    const t = target('openai');
    expect(firstContent(openaiAdapter, user(ASK, PDF), t)).toEqual([
      { type: 'text', text: 'read it' },
      { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0x', filename: 'My report (v2).pdf' } },
    ]);
    expect(refusal(() => openaiAdapter.buildRequest(user(URL_DOC), t)).message).toContain('not by URL');
    expect(refusal(() => openaiAdapter.buildRequest(toolResult(PDF), t)).param).toBe('messages.0.content.0');
  });

  test('gemini: inlineData and fileData; a document in a function response refused', () => {
    const t = target('gemini');
    expect(firstContent(geminiAdapter, user(PDF, URL_DOC), t, 'contents')).toEqual([
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0x' } },
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' } },
    ]);
    expect(refusal(() => geminiAdapter.buildRequest(toolResult(PDF), t)).message).toContain('function response');
  });

  test('bedrock (Converse): document blocks with a valid, unique name; URL and unknown types refused', () => {
    const a = createBedrockAdapter();
    const t = target('bedrock', { region: 'us-east-1' });
    expect(firstContent(a, user(PDF, { ...PDF, filename: undefined }, ASK), t)).toEqual([
      { document: { format: 'pdf', name: 'My report (v2)-1', source: { bytes: 'JVBERi0x' } } },
      { document: { format: 'pdf', name: 'document-2', source: { bytes: 'JVBERi0x' } } },
      { text: 'read it' },
    ]);
    expect(refusal(() => a.buildRequest(user(URL_DOC, ASK), t))).toMatchObject({ param: 'messages.0.content.0' });
    expect(
      refusal(() => a.buildRequest(user({ ...CSV, source: { kind: 'base64', mediaType: 'application/zip', data: 'UEs=' } }), t)).message,
    ).toContain('application/zip');
    expect(refusal(() => a.buildRequest(toolResult(PDF), t)).message).toContain('tool result');
  });

  test('vertex: Claude takes base64 but no URL; Gemini takes both', () => {
    const sa = JSON.stringify({ client_email: 'gw@p.iam.gserviceaccount.com', private_key: 'unused', project_id: 'p' });
    const claude = target('vertex', {}, sa, 'claude-sonnet-4-5@20250929');
    expect(firstContent(vertexAdapter, user(PDF), claude)).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'My report (v2).pdf' },
    ]);
    expect(refusal(() => vertexAdapter.buildRequest(user(URL_DOC), claude)).message).toContain('Vertex');
    expect(firstContent(vertexAdapter, user(URL_DOC), target('vertex', {}, sa, 'gemini-2.5-flash'), 'contents')).toEqual([
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' } },
    ]);
  });

  test('cohere and ollama read no documents: refused, never dropped', () => {
    expect(refusal(() => cohereAdapter.buildRequest(user(ASK, PDF), target('cohere'))).param).toBe('messages.0.content.0');
    expect(refusal(() => ollamaAdapter.buildRequest(user(ASK, PDF), target('ollama'))).message).toContain('no documents');
  });
});
