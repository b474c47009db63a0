import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * PDFs across families (issue 26, defect 6), through the official SDKs: Chat `file` parts and
 * Responses `input_file` toward Anthropic become `document` blocks; Messages `document` blocks
 * toward OpenAI become Chat `file` parts. What the target cannot take (an OpenAI file_id, a URL
 * toward Chat Completions, a document inside a tool result) is a 400 naming the part, and nothing
 * reaches the upstream. The mocks refuse what the real APIs refuse.
 */

const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n').toString('base64');
const PDF_URL = `data:application/pdf;base64,${PDF}`;

let w: World;
let openai: OpenAI;
let anthropic: Anthropic;
beforeAll(async () => {
  w = await startWorld();
  openai = new OpenAI({ apiKey: w.p.apiKey, baseURL: `${w.tg.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: w.p.apiKey, baseURL: w.tg.url, maxRetries: 0 });
}, 60_000);
afterAll(() => stopWorld(w));

type Sent = { messages: { role: string; content: unknown }[] };
const lastSent = (up: World['an']): Sent => up.requests.at(-1)?.body as unknown as Sent;

/** The 400 an SDK call threw: status, param and message. */
const refusal = async (call: () => Promise<unknown>): Promise<{ status: number; param?: string; message: string }> => {
  try {
    await call();
  } catch (e) {
    if (e instanceof OpenAI.APIError || e instanceof Anthropic.APIError) {
      const body = e.error as { error?: { param?: string; message?: string }; param?: string; message?: string } | undefined;
      const inner = body?.error ?? body;
      return { status: e.status ?? 0, ...(inner?.param ? { param: inner.param } : {}), message: inner?.message ?? e.message };
    }
    throw e;
  }
  throw new Error('expected a refusal');
};

describe('Chat Completions file parts toward Anthropic', () => {
  test('a base64 PDF becomes a document block (title from the file name), streamed and not', async () => {
    const before = w.an.requests.length;
    const r = await openai.chat.completions.create({
      model: 'claude-mini',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'summarise' },
            { type: 'file', file: { file_data: PDF_URL, filename: 'report.pdf' } },
          ],
        },
      ],
    });
    expect(r.choices[0]?.message.content).toBe('anthropic says: summarise');
    expect(w.an.requests.length).toBe(before + 1);
    expect(lastSent(w.an).messages[0]?.content).toEqual([
      { type: 'text', text: 'summarise' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' },
    ]);
    const stream = await openai.chat.completions.create({
      model: 'claude-mini',
      stream: true,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { file_data: PDF_URL } },
            { type: 'text', text: 'streamed' },
          ],
        },
      ],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('anthropic says: streamed');
    expect(lastSent(w.an).messages[0]?.content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
      { type: 'text', text: 'streamed' },
    ]);
  });

  test('a file_id (a file uploaded to OpenAI) is refused, naming the field; nothing is sent', async () => {
    const before = w.an.requests.length;
    const r = await refusal(() =>
      openai.chat.completions.create({
        model: 'claude-mini',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'file', file: { file_id: 'file-abc123' } },
            ],
          },
        ],
      }),
    );
    expect(r.status).toBe(400);
    expect(r.param).toBe('messages.0.content.1.file.file_id');
    expect(r.message).toContain('file_id');
    expect(w.an.requests.length).toBe(before);
  });

  test('a file_data that is not a base64 data URL is a 400 naming it', async () => {
    const r = await refusal(() =>
      openai.chat.completions.create({
        model: 'claude-mini',
        messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf,plain' } }] }],
      }),
    );
    expect(r).toMatchObject({ status: 400, param: 'messages.0.content.0.file.file_data' });
  });
});

describe('Messages document blocks toward OpenAI (Chat Completions upstream)', () => {
  test('a base64 PDF becomes a file part with file_data (file name from the title), streamed and not', async () => {
    const r = await anthropic.messages.create({
      model: 'gpt-mini',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Q3 report' },
            { type: 'text', text: 'what is in it' },
          ],
        },
      ],
    });
    expect(r.content[0]).toMatchObject({ type: 'text', text: 'openai says: what is in it' });
    expect(lastSent(w.oa).messages[0]?.content).toEqual([
      { type: 'file', file: { file_data: PDF_URL, filename: 'Q3 report' } },
      { type: 'text', text: 'what is in it' },
    ]);
    const stream = anthropic.messages.stream({
      model: 'gpt-mini',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'streamed pdf' },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
          ],
        },
      ],
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'openai says: streamed pdf' });
    expect(lastSent(w.oa).messages[0]?.content).toEqual([
      { type: 'text', text: 'streamed pdf' },
      { type: 'file', file: { file_data: PDF_URL, filename: 'document.pdf' } },
    ]);
  });

  test('a plain-text document becomes text', async () => {
    await anthropic.messages.create({
      model: 'gpt-mini',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The sky is green.' } },
            { type: 'text', text: ' Colour?' },
          ],
        },
      ],
    });
    expect(lastSent(w.oa).messages[0]?.content).toBe('The sky is green. Colour?');
  });

  test('a URL document is refused (Chat Completions takes no file URL, the gateway fetches none); nothing is sent', async () => {
    const before = w.oa.requests.length;
    const r = await refusal(() =>
      anthropic.messages.create({
        model: 'gpt-mini',
        max_tokens: 100,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
            ],
          },
        ],
      }),
    );
    expect(r.status).toBe(400);
    expect(r.param).toBe('messages.0.content.1');
    expect(r.message).toContain('not by URL');
    expect(w.oa.requests.length).toBe(before);
  });

  test('a document inside a tool result is refused toward OpenAI (tool messages take text only)', async () => {
    const before = w.oa.requests.length;
    const r = await refusal(() =>
      anthropic.messages.create({
        model: 'gpt-mini',
        max_tokens: 100,
        tools: [{ name: 'fetch_doc', input_schema: { type: 'object' } }],
        messages: [
          { role: 'user', content: 'get it' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch_doc', input: {} }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }],
              },
            ],
          },
        ],
      }),
    );
    expect(r.status).toBe(400);
    expect(r.param).toBe('messages.2.content.0.content.0');
    expect(r.message).toContain('tool result');
    expect(w.oa.requests.length).toBe(before);
  });
});

describe('Responses input_file', () => {
  test('toward Anthropic: file_data and file_url become document blocks', async () => {
    const r = await openai.responses.create({
      model: 'claude-mini',
      store: false,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_file', file_data: PDF_URL, filename: 'a.pdf' },
            { type: 'input_file', file_url: 'https://example.com/b.pdf' },
            { type: 'input_text', text: 'compare' },
          ],
        },
      ],
    });
    expect(r.output_text).toBe('anthropic says: compare');
    expect(lastSent(w.an).messages[0]?.content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'a.pdf' },
      { type: 'document', source: { type: 'url', url: 'https://example.com/b.pdf' } },
      { type: 'text', text: 'compare' },
    ]);
  });

  test('toward Anthropic: a file_id and a type Anthropic cannot read are refused, naming the part', async () => {
    const before = w.an.requests.length;
    const byId = await refusal(() =>
      openai.responses.create({
        model: 'claude-mini',
        store: false,
        input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-xyz' }] }],
      }),
    );
    expect(byId).toMatchObject({ status: 400, param: 'input.0.content.0.file_id' });
    const csv = await refusal(() =>
      openai.responses.create({
        model: 'claude-mini',
        store: false,
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'x' },
              { type: 'input_file', file_data: 'data:text/csv;base64,YSxiCjEsMgo=', filename: 't.csv' },
            ],
          },
        ],
      }),
    );
    expect(csv).toMatchObject({ status: 400, param: 'input.0.content.1' });
    expect(csv.message).toContain('text/csv');
    expect(w.an.requests.length).toBe(before);
  });

  test('toward OpenAI the Responses request goes natively: file_url reaches the upstream as sent', async () => {
    const r = await openai.responses.create({
      model: 'gpt-mini',
      store: false,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_file', file_url: 'https://example.com/c.pdf' },
            { type: 'input_text', text: 'read' },
          ],
        },
      ],
    });
    expect(r.output_text).toBe('openai says: read');
    const sent = w.oa.requests.at(-1);
    expect(sent?.path).toBe('/v1/responses');
    expect((sent?.body.input as { content: unknown[] }[] | undefined)?.[0]?.content[0]).toEqual({
      type: 'input_file',
      file_url: 'https://example.com/c.pdf',
    });
  });
});
