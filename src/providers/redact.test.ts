import { describe, expect, test } from 'bun:test';
import { MAX_UPSTREAM_EXCERPT, redact, redactExcerpt } from './redact.ts';

describe('redact', () => {
  const cases: [string, string, string][] = [
    ['OpenAI key in a message', 'Incorrect API key provided: sk-proj-AbCdEf1234567890xyz.', 'Incorrect API key provided: sk-***.'],
    ['Anthropic key', 'key sk-ant-api03-AAAAbbbbCCCC1111-xyz_ok', 'key sk-***'],
    ['Bearer header', 'Authorization: Bearer abc.def.ghi', 'Authorization: Bearer ***'],
    ['Bearer alone', 'sent Bearer eyJhbGciOi.payload.sig then', 'sent Bearer *** then'],
    ['Google key', 'url ?key=AIzaSyD-1234567890abcdefghijkl&alt=sse', 'url ?key=AIza***&alt=sse'],
    ['Groq key', 'gsk_4fT9kLmN0pQrStUvWxYz12', 'gsk_***'],
    ['NVIDIA key', 'nvapi-Zx9_Yw8-Vu7Ts6Rq5', 'nvapi-***'],
    ['JSON api_key field', '{"api_key": "plain-secret-value"}', '{"api_key": "***"}'],
    ['x-api-key header', 'x-api-key: hunter2hunter2', 'x-api-key: ***'],
    ['AWS access key id', 'AKIAIOSFODNN7EXAMPLE used', 'AKIA*** used'],
    ['long high-entropy run', 'blob aGVsbG8gV29ybGQhIFRoaXMgaXMgYSBsb25nIGJhc2U2NCBzdHJpbmc9 end', 'blob *** end'],
  ];
  for (const [name, input, want] of cases) test(name, () => expect(redact(input)).toBe(want));

  test('leaves ordinary error text, model paths and token counts alone', () => {
    const s =
      'max_tokens: 8192 > 4096, which is the maximum allowed for accounts/fireworks/models/llama-v3p1-70b-instruct; input_tokens 25';
    expect(redact(s)).toBe(s);
    const j = '{"error":{"message":"The model `gpt-5x` does not exist","type":"invalid_request_error","code":"model_not_found"}}';
    expect(redact(j)).toBe(j);
  });

  test('masks exact secrets passed by the caller', () => {
    expect(redact('echo: my-weird key!', ['my-weird key!'])).toBe('echo: ***');
  });

  test('the excerpt is at most 2000 characters and redacted first', () => {
    const long = `${'x '.repeat(1500)}sk-live-0123456789abcdef`;
    const r = redactExcerpt(long);
    expect(r.length).toBeLessThanOrEqual(MAX_UPSTREAM_EXCERPT);
    expect(redactExcerpt(`sk-abcdefghijkl0123 ${'y'.repeat(3000)}`).startsWith('sk-*** ')).toBe(true);
    expect(redactExcerpt(`sk-abcdefghijkl0123 ${'y'.repeat(3000)}`)).not.toContain('abcdefghijkl0123');
  });
});
