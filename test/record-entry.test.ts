import { expect, test } from 'bun:test';
import type { RecordEntry } from '../src/core/records.ts';
import { recordJson } from '../src/data-plane/remote/remote-sink.ts';
import { COLUMNS, entryCsv, entryJson, entryOf, UnstorableText } from '../src/records/entry.ts';

/**
 * A record entry is a flat row plus bodies as JSON text; each sink serialises it once. Every
 * serialisation must carry each column and body exactly (text with quotes, newlines, the CSV quote
 * character, non-Latin-1 characters), and refuse what a column cannot hold as the database would.
 */
const tricky = 'say "hi"\n\\ \x01 ünïcödé 😀';
const entry: RecordEntry = {
  row: {
    request_id: '0190b1c2-0000-7000-8000-000000000001',
    received_at: '2026-11-26T11:00:00.000Z',
    endpoint: '/v1/chat/completions',
    model: tricky,
    http_status: 200,
    latency_ms: 7,
    stream: false,
    cost_nano_usd: 123456789,
    client_request_id: null,
  },
  requestBody: JSON.stringify({ messages: [{ role: 'user', content: tricky }] }),
  responseBody: '{"ok":true}',
  sanitized: 'usage',
};

test('a pushed record (recordJson) and the PostgreSQL insert (entryJson) give back the row and the bodies as sent', () => {
  for (const text of [recordJson(entry), entryJson(entry)]) {
    const o = JSON.parse(text) as Record<string, unknown>;
    for (const [k, v] of Object.entries(entry.row)) expect(o[k]).toEqual(v);
    expect(o.request_body).toEqual({ messages: [{ role: 'user', content: tricky }] });
    expect(o.response_body).toEqual({ ok: true });
    expect(o.sanitized).toBe('usage');
  }
  // An entry without any column still makes a JSON object.
  expect(JSON.parse(recordJson({ row: {}, requestBody: null, responseBody: null, sanitized: null }))).toEqual({
    request_body: null,
    response_body: null,
    sanitized: null,
  });
});

test('a COPY line has one value per column in table order, quotes text (the quote character doubled) and leaves NULL empty', () => {
  const line = entryCsv(entry);
  expect(line.endsWith('\n')).toBe(true);
  // Split on commas outside \x01-quoted values.
  const values: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length - 1; i++) {
    const c = line[i] as string;
    if (c === '\x01') {
      if (quoted && line[i + 1] === '\x01') {
        cur += '\x01';
        i++;
      } else quoted = !quoted;
    } else if (c === ',' && !quoted) {
      values.push(cur);
      cur = '';
    } else cur += c;
  }
  values.push(cur);
  expect(values.length).toBe(COLUMNS.length);
  const at = (name: string): string => values[COLUMNS.findIndex((c) => c.name === name)] as string;
  expect(at('model')).toBe(tricky);
  expect(at('http_status')).toBe('200');
  expect(at('stream')).toBe('false');
  expect(at('cost_nano_usd')).toBe('123456789');
  expect(at('client_request_id')).toBe('');
  expect(at('request_body')).toBe(entry.requestBody as string);
  expect(at('sanitized')).toBe('usage');
  expect(() => entryCsv({ ...entry, row: { ...entry.row, model: 'a\0b' } })).toThrow(UnstorableText);
  expect(() => entryCsv({ ...entry, row: { ...entry.row, model: 'lone \ud800' } })).toThrow(UnstorableText);
});

test('entryOf (tools and tests) fills NOT NULL defaults and writes times as ISO text', () => {
  const e = entryOf({
    requestId: '0190b1c2-0000-7000-8000-000000000002',
    receivedAt: new Date('2026-11-26T11:00:00Z'),
    endpoint: '/v1/messages',
    httpStatus: 200,
    latencyMs: 1,
  });
  expect(e.row.received_at).toBe('2026-11-26T11:00:00.000Z');
  expect(e.row.input_tokens).toBe(0);
  expect(e.row.stream).toBe(false);
  expect(e.requestBody).toBeNull();
});
