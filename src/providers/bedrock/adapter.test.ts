import { describe, expect, test } from 'bun:test';
import { errorFields } from '../golden.ts';
import { fakeHttp, goldenSuite, thrown, type RequestCase } from '../golden-suite.ts';
import { fixtureJson } from '../golden.ts';
import type { UpstreamTarget } from '../types.ts';
import { createBedrockAdapter } from './index.ts';
import { amzDate, canonicalUri, sigV4Parts, signSigV4 } from './sigv4.ts';

const FIXED = new Date('2024-01-02T03:04:05Z');
const adapter = createBedrockAdapter({ now: () => FIXED });
const noHttp = fakeHttp(() => {
  throw new Error('Bedrock never fetches a token');
});

await goldenSuite({
  family: 'bedrock',
  adapter,
  authorizeWith: noHttp.http,
  responses: ['response-text', 'response-tool-use', 'response-json-mode', 'response-guardrail'],
  streams: [
    'stream-text.frames.json',
    'stream-tool-use.frames.json',
    'stream-json-mode.frames.json',
    'stream-exception.frames.json',
    'stream-model-error.frames.json',
    'stream-truncated.frames.json',
    'stream-smithy.bin',
  ],
});

const CREDS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const cases = fixtureJson('bedrock', 'requests.json') as RequestCase[];
const caseNamed = (name: string): RequestCase => {
  const c = cases.find((x) => x.name === name);
  if (!c) throw new Error(`fixture ${name} missing`);
  return c;
};

describe('SigV4', () => {
  test('AWS test suite vector get-vanilla', () => {
    const p = sigV4Parts(
      { method: 'GET', url: 'https://example.amazonaws.com/', headers: {}, body: '' },
      { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' },
      { region: 'us-east-1', service: 'service', credentials: CREDS, now: new Date('2015-08-30T12:36:00Z') },
    );
    expect(p.canonicalRequest).toBe(
      'GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(p.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });

  test('a Bedrock request with `:` in the model id matches the AWS SDK (smithy signature-v4) signature', () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    const headers = signSigV4(
      {
        method: 'POST',
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
      },
      { region: 'us-east-1', service: 'bedrock', credentials: CREDS, now: FIXED, contentSha256: true },
    );
    expect(headers['authorization']).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=492e2a3ce4e0f7cffae63d2e63ad90a54da99e99b9ec3bb28280d9600080d47d',
    );
    expect(headers['x-amz-date']).toBe('20240102T030405Z');
    expect(headers['x-amz-content-sha256']).toBe('c3335e07d6e89650bf94cb98664be69f8774dbc3198df221f113db0a59ea14f0');
    expect(headers['host']).toBeUndefined();
  });

  test('the canonical URI double-encodes the escaped path; amzDate format', () => {
    expect(canonicalUri('/model/a.b-v2%3A0/converse')).toBe('/model/a.b-v2%253A0/converse');
    expect(canonicalUri('/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x/converse')).toBe(
      '/model/arn%253Aaws%253Abedrock%253Aus-east-1%253A1%253Ainference-profile%252Fus.x/converse',
    );
    expect(amzDate(FIXED)).toBe('20240102T030405Z');
  });

  test('authorize signs deterministically, with the credential scope and never the secret', async () => {
    const c = caseNamed('sigv4-anthropic-basic');
    const a = await adapter.authorize?.(adapter.buildRequest(c.request, c.target), c.target, noHttp.http);
    const b = await adapter.authorize?.(adapter.buildRequest(c.request, c.target), c.target, noHttp.http);
    expect(a).toEqual(b);
    expect(a?.url).toBe('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse');
    expect(a?.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20240102\/us-east-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(Object.keys(a?.headers ?? {}).sort()).toEqual(['accept', 'authorization', 'content-type', 'x-amz-content-sha256', 'x-amz-date']);
    expect(JSON.stringify(a)).not.toContain(CREDS.secretAccessKey);
    const later = createBedrockAdapter({ now: () => new Date('2024-01-02T03:04:06Z') });
    const c2 = await later.authorize?.(later.buildRequest(c.request, c.target), c.target, noHttp.http);
    expect(c2?.headers['authorization']).not.toBe(a?.headers['authorization']);
    expect(noHttp.calls).toHaveLength(0);
  });

  test('without accessKeyId the key is a bearer API key and authorize changes nothing', async () => {
    const c = caseNamed('bearer-stream-tools-images-history');
    const built = adapter.buildRequest(c.request, c.target);
    expect(built.headers['authorization']).toBe(`Bearer ${c.target.connection.apiKey ?? ''}`);
    expect(await adapter.authorize?.(built, c.target, noHttp.http)).toEqual(built);
  });

  test('a missing region or secret is provider_misconfigured', async () => {
    const c = caseNamed('sigv4-anthropic-basic');
    const noRegion: UpstreamTarget = { ...c.target, connection: { ...c.target.connection, options: { accessKeyId: 'AKIDEXAMPLE' } } };
    const e1 = await thrown(() => adapter.buildRequest(c.request, noRegion));
    expect(errorFields(e1)).toMatchObject({ kind: 'upstream_error', errorCode: 'provider_misconfigured' });
    expect((e1 as Error).message).toContain('options.region');
    const noSecret: UpstreamTarget = { ...c.target, connection: { ...c.target.connection, apiKey: '' } };
    const e2 = await thrown(() => adapter.authorize?.(adapter.buildRequest(c.request, noSecret), noSecret, noHttp.http));
    expect(errorFields(e2)).toMatchObject({ errorCode: 'provider_misconfigured' });
  });

  test('an http image URL is an invalid_request (Bedrock takes bytes only)', async () => {
    const c = caseNamed('sigv4-anthropic-basic');
    const request = {
      ...c.request,
      messages: [{ role: 'user' as const, content: [{ type: 'image' as const, url: 'https://example.com/a.png' }] }],
    };
    expect(errorFields(await thrown(() => adapter.buildRequest(request, c.target)))).toMatchObject({
      kind: 'invalid_request',
      param: 'messages',
    });
  });
});

describe('bedrock parseResponse edge cases', () => {
  test('malformed bodies → bad_gateway', async () => {
    for (const body of ['nope', '{"output":{}}', '[]']) {
      expect(errorFields(await thrown(() => adapter.parseResponse(body)))).toMatchObject({ kind: 'bad_gateway', status: 502 });
    }
  });
});
