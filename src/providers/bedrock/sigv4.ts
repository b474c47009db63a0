/**
 * AWS Signature Version 4 header signing (no AWS SDK), per the AWS spec and smithy's
 * signature-v4: canonical request → string to sign → derived key → signature.
 *
 * The path is taken as it goes on the wire (already percent-encoded, e.g. `%3A` for a `:` in a
 * Bedrock model id) and encoded once more for the canonical URI (`%253A`), as for every service
 * except S3. `host` is signed but not added to the outgoing headers: fetch derives the same value
 * from the URL.
 */
import { createHash, createHmac } from 'node:crypto';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigV4Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SigV4Options {
  region: string;
  service: string;
  credentials: SigV4Credentials;
  now: Date;
  /** Adds `x-amz-content-sha256` (Bedrock and S3 style). */
  contentSha256?: boolean;
}

/** Headers never signed: proxies and clients may add or rewrite them. */
const UNSIGNABLE = new Set([
  'authorization',
  'user-agent',
  'expect',
  'transfer-encoding',
  'x-amzn-trace-id',
  'connection',
  'content-length',
]);

export const sha256Hex = (data: string): string => createHash('sha256').update(data, 'utf8').digest('hex');

const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding: only unreserved characters stay literal. */
export const uriEncode = (s: string): string =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export const amzDate = (d: Date): string =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** The wire path (percent-encoded) → canonical URI: each segment encoded again, `/` kept. */
export const canonicalUri = (wirePath: string): string => {
  const path = wirePath === '' ? '/' : wirePath;
  return path
    .split('/')
    .map((seg) => uriEncode(seg))
    .join('/');
};

export const canonicalQuery = (search: string): string => {
  const params = [...new URLSearchParams(search)].map(([k, v]) => [uriEncode(k), uriEncode(v)] as const);
  params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return params.map(([k, v]) => `${k}=${v}`).join('&');
};

export interface SigV4Parts {
  canonicalRequest: string;
  stringToSign: string;
  signedHeaders: string;
  signature: string;
  authorization: string;
}

/** Computes every intermediate value (exposed for tests against published vectors). */
export const sigV4Parts = (req: SigV4Request, headers: Record<string, string>, opts: SigV4Options): SigV4Parts => {
  const url = new URL(req.url);
  const date = amzDate(opts.now);
  const shortDate = date.slice(0, 8);
  const scope = `${shortDate}/${opts.region}/${opts.service}/aws4_request`;
  const canon = new Map<string, string>();
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (UNSIGNABLE.has(name)) continue;
    canon.set(name, v.trim().replace(/\s+/g, ' '));
  }
  const names = [...canon.keys()].sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    req.method.toUpperCase(),
    canonicalUri(url.pathname),
    canonicalQuery(url.search),
    names.map((n) => `${n}:${canon.get(n) ?? ''}\n`).join(''),
    signedHeaders,
    sha256Hex(req.body),
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonicalRequest)].join('\n');
  const kDate = hmac(`AWS4${opts.credentials.secretAccessKey}`, shortDate);
  const kSigning = hmac(hmac(hmac(kDate, opts.region), opts.service), 'aws4_request');
  const signature = createHmac('sha256', kSigning).update(stringToSign, 'utf8').digest('hex');
  return {
    canonicalRequest,
    stringToSign,
    signedHeaders,
    signature,
    authorization: `AWS4-HMAC-SHA256 Credential=${opts.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
};

/**
 * Returns the request's headers plus `x-amz-date`, optional `x-amz-content-sha256` and
 * `x-amz-security-token`, and `authorization`. Existing headers with those names are replaced.
 */
export const signSigV4 = (req: SigV4Request, opts: SigV4Options): Record<string, string> => {
  const out: Record<string, string> = {};
  const reserved = new Set(['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token', 'host']);
  for (const [k, v] of Object.entries(req.headers)) if (!reserved.has(k.toLowerCase())) out[k] = v;
  out['x-amz-date'] = amzDate(opts.now);
  if (opts.contentSha256) out['x-amz-content-sha256'] = sha256Hex(req.body);
  if (opts.credentials.sessionToken) out['x-amz-security-token'] = opts.credentials.sessionToken;
  const parts = sigV4Parts(req, { ...out, host: new URL(req.url).host }, opts);
  out['authorization'] = parts.authorization;
  return out;
};
