import { describe, expect, test } from 'bun:test';
import { attemptSecrets, MAX_UPSTREAM_EXCERPT, maskSecrets, redact, redactExcerpt, secretForms } from './redact.ts';

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

  test('secrets are masked by value in their raw, URL-encoded and JSON-escaped forms; shorter than 4 are not', () => {
    const forms = secretForms(['a/b+c"d 1', 'xyz']);
    const text = `raw a/b+c"d 1, url ${encodeURIComponent('a/b+c"d 1')}, form a%2Fb%2Bc%22d+1, json ${JSON.stringify('a/b+c"d 1')}, short xyz`;
    expect(maskSecrets(text, forms)).toBe('raw ***, url ***, form ***, json "***", short xyz');
  });

  test('a text cut short in the middle of a secret loses the cut part too', () => {
    const forms = secretForms(['0123456789abcdef0123456789abcdef']);
    expect(maskSecrets('Incorrect API key provided: 0123456789ab…', forms)).toBe('Incorrect API key provided: ***…');
    expect(maskSecrets('ends with an ordinary word…', forms)).toBe('ends with an ordinary word…');
  });

  test('attempt secrets: the key, JSON-key secrets, options headers and every credential sent', () => {
    const sa = JSON.stringify({
      type: 'service_account',
      client_email: 'x@y',
      private_key: 'PEMDATA',
      private_key_id: 'kid123',
      token_uri: 'https://t',
    });
    const got = attemptSecrets({ apiKey: sa, options: { region: 'us', sessionToken: 'sess-tok', headers: { 'X-Title': 'app-title' } } }, [
      {
        url: 'https://t/token',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=jwt&assertion=signed.jwt.value',
      },
      {
        url: 'https://h/v1/x?key=qkey&alt=sse',
        headers: { authorization: 'Bearer ya29.exchanged', 'x-goog-api-key': 'gkey', 'anthropic-version': '2023-06-01' },
        body: '{}',
      },
      {
        url: 'https://b',
        headers: {
          Authorization:
            'AWS4-HMAC-SHA256 Credential=AKIDX/20240101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=deadbeef',
        },
        body: '',
      },
    ]);
    for (const want of [
      sa,
      'PEMDATA',
      'kid123',
      'sess-tok',
      'app-title',
      'signed.jwt.value',
      'ya29.exchanged',
      'gkey',
      'qkey',
      'AKIDX',
      'deadbeef',
    ])
      expect(got).toContain(want);
    for (const not of ['us', 'service_account', 'x@y', '2023-06-01', 'jwt', 'https://t']) expect(got).not.toContain(not);
  });
});
