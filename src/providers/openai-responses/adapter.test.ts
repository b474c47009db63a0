import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamEvent } from '../../canonical/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { createFrameParser } from '../framing.ts';
import { FIXTURES, readJson } from '../../formats/test-support.ts';
import { createResponsesStreamDecoder, parseResponsesAnswer } from './index.ts';

/**
 * The Responses wire read back for records: the gateway's own Responses fixtures (what the
 * official SDK accepts) decode to the canonical content they were made from.
 */

const decode = (sse: string): StreamEvent[] => {
  const parser = createFrameParser('sse');
  const decoder = createResponsesStreamDecoder('openai');
  const out: StreamEvent[] = [];
  for (const f of [...parser.push(new TextEncoder().encode(sse)), ...parser.flush()]) out.push(...decoder.push(f));
  out.push(...decoder.end());
  return out;
};

const stream = (name: string) => readFileSync(join(FIXTURES, 'responses/streams', `${name}.sse.txt`), 'utf8');

describe('Responses stream decoder', () => {
  test('text and tool calls, finish and usage from response.completed', () => {
    const events = decode(stream('text-and-tools'));
    const text = events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
    const canonical = readJson(join(FIXTURES, 'canonical/streams/text-and-tools.json')) as { events: StreamEvent[] };
    const want = canonical.events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
    expect(text).toBe(want);
    const starts = events.filter((e) => e.type === 'tool_call_start');
    expect(starts.length).toBe(canonical.events.filter((e) => e.type === 'tool_call_start').length);
    expect(events.find((e) => e.type === 'finish')).toEqual({ type: 'finish', reason: 'tool_calls' });
    expect(events.some((e) => e.type === 'usage')).toBe(true);
  });

  test('an error event fails the stream; a stream without a terminal event ended early', () => {
    expect(() => decode(stream('error'))).toThrow(GatewayError);
    expect(() => decode('event: response.created\ndata: {"type":"response.created","response":{"id":"resp_1","model":"m"}}\n\n')).toThrow(
      'ended before completion',
    );
  });

  test('response.failed is the upstream error it carries', () => {
    const failed =
      'event: response.failed\ndata: {"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"boom"}}}\n\n';
    expect(() => decode(failed)).toThrow('boom');
  });
});

describe('Responses JSON answer', () => {
  test('text, usage with cached and reasoning tokens, incomplete as length', () => {
    const body = JSON.stringify({
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      model: 'o4-mini',
      output: [
        { id: 'rs_1', type: 'reasoning', summary: [] },
        {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          content: [
            { type: 'output_text', text: 'Hel', annotations: [] },
            { type: 'output_text', text: 'lo', annotations: [] },
          ],
        },
      ],
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 7,
        output_tokens_details: { reasoning_tokens: 5 },
        total_tokens: 17,
      },
    });
    expect(parseResponsesAnswer('openai', body)).toMatchObject({
      id: 'resp_1',
      text: 'Hello',
      finishReason: 'length',
      usage: { inputTokens: 10, outputTokens: 7, cachedInputTokens: 4, reasoningTokens: 5 },
    });
  });

  test('function calls finish as tool_calls; a body without output is a bad gateway', () => {
    const body = JSON.stringify({
      id: 'r',
      status: 'completed',
      output: [{ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }],
      usage: null,
    });
    expect(parseResponsesAnswer('openai', body)).toMatchObject({
      toolCalls: [{ id: 'call_1', name: 'f', arguments: '{}' }],
      finishReason: 'tool_calls',
    });
    expect(() => parseResponsesAnswer('openai', '{"id":"r"}')).toThrow(GatewayError);
  });
});
