/**
 * Masks anything in an upstream body that looks like a credential before it is kept on a
 * GatewayError or a record. Deliberately over-eager: a masked id is cheap, a leaked key is not.
 */

export const MAX_UPSTREAM_EXCERPT = 2000;

const MASK = '***';

/** Well-known key prefixes (OpenAI/Anthropic `sk-`, Groq `gsk_`, xAI, HF, NVIDIA, Perplexity, …). */
const PREFIXED_KEY =
  /\b(sk|sk_live|sk_test|rk|pk|gsk|xai|hf|nvapi|pplx|csk|r8|fw|ghp|gho|github_pat|glpat|AKIA|ASIA)([-_])[A-Za-z0-9_*-]{6,}/g;
const AWS_ACCESS_KEY_ID = /\b(AKIA|ASIA)[A-Z0-9]{12,}\b/g;
const GOOGLE_KEY = /\bAIza[0-9A-Za-z_-]{10,}/g;
const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
/** `"api_key": "…"`, `x-api-key: …`, `token=…` style pairs. */
const NAMED_SECRET =
  /(\b(?:api[_-]?key|x-api-key|api-key|authorization|access[_-]?token|refresh[_-]?token|client[_-]?secret|secret|password|token)["']?\s*[:=]\s*["']?)((?:Bearer|Basic)\s+)?([^\s"',;&}]+)/gi;
/** Long runs of base64/base64url/hex with mixed character classes (high entropy). */
const LONG_RUN = /[A-Za-z0-9+/_-]{32,}={0,2}/g;

const looksRandom = (s: string): boolean => {
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((r) => r.test(s)).length;
  if (classes >= 3) return true;
  // Pure hex or lower-case+digits of key length (e.g. 40+ hex chars) is also suspicious.
  return s.length >= 40 && classes >= 2 && /^[a-f0-9]+$/i.test(s);
};

/** Secrets shorter than this are not masked by value (they would mask ordinary words). */
export const MIN_SECRET_LENGTH = 4;

/**
 * The forms in which a secret value can appear in upstream text: as is, URL-encoded (query or
 * form), and JSON-escaped. Values shorter than `MIN_SECRET_LENGTH` are left out. Longest first,
 * so that a secret containing another is masked whole.
 */
export const secretForms = (values: Iterable<string>): string[] => {
  const out = new Set<string>();
  for (const v of values) {
    if (v.length < MIN_SECRET_LENGTH) continue;
    out.add(v);
    out.add(encodeURIComponent(v));
    out.add(new URLSearchParams({ v }).toString().slice(2));
    out.add(JSON.stringify(v).slice(1, -1));
  }
  return [...out].sort((a, b) => b.length - a.length);
};

/**
 * Masks every occurrence of the given secret forms (see `secretForms`). A text cut short with `…`
 * may end with the beginning of a secret: that tail is masked too.
 */
export const maskSecrets = (text: string, forms: readonly string[]): string => {
  let out = text;
  for (const s of forms) if (out.includes(s)) out = out.split(s).join(MASK);
  if (!out.endsWith('…')) return out;
  const body = out.slice(0, -1);
  const last = body.at(-1);
  if (last === undefined) return out;
  for (const s of forms) {
    // Candidate prefix lengths k end with the text's last character: s[k - 1] === last.
    for (let i = s.lastIndexOf(last, s.length - 2); i >= 1; i = s.lastIndexOf(last, i - 1)) {
      const k = i + 1;
      if (k <= body.length && body.endsWith(s.slice(0, k))) return `${body.slice(0, -k)}${MASK}…`;
    }
  }
  return out;
};

/**
 * Returns `text` with key-like substrings masked. `secrets` are exact values (e.g. the
 * connection's API key) that are masked wherever they occur, whatever they look like, before the
 * patterns run.
 */
export const redact = (text: string, secrets: readonly string[] = []): string => {
  let out = secrets.length > 0 ? maskSecrets(text, secretForms(secrets)) : text;
  out = out
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`)
    .replace(PREFIXED_KEY, (_m, prefix: string, sep: string) => `${prefix}${sep}${MASK}`)
    .replace(AWS_ACCESS_KEY_ID, (_m, prefix: string) => `${prefix}${MASK}`)
    .replace(GOOGLE_KEY, `AIza${MASK}`)
    .replace(NAMED_SECRET, (m, name: string, scheme: string | undefined, value: string) =>
      value.endsWith(MASK) ? m : `${name}${scheme ?? ''}${MASK}`,
    )
    .replace(LONG_RUN, (m) => (looksRandom(m) ? MASK : m));
  return out;
};

/** A redacted excerpt of at most `MAX_UPSTREAM_EXCERPT` characters. */
export const redactExcerpt = (text: string, secrets: readonly string[] = []): string => {
  const r = redact(text, secrets);
  return r.length > MAX_UPSTREAM_EXCERPT ? `${r.slice(0, MAX_UPSTREAM_EXCERPT - 1)}…` : r;
};

// ---- the credentials of one upstream attempt ---------------------------------------------------

/** Option, JSON-key and form-field names whose values are credentials (`apiKey`, `private_key_id`, `sessionToken`, …). */
const SECRET_FIELD = /(key|secret|password|passwd|token|credentials?|signature|assertion)([-_]?id)?$/i;
/** Header and query-parameter names that carry credentials (`authorization`, `api-key`, `x-goog-api-key`, `x-amz-security-token`, `key`, …). */
const SECRET_HEADER = /auth|key|token|secret|signature|credential|cookie|session|password/i;

interface ConnectionSecrets {
  apiKey?: string;
  options: Readonly<Record<string, unknown>>;
}

interface SentRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** String leaves of a JSON value whose field name says they are secret; every leaf under `all`. */
const secretLeaves = (v: unknown, out: string[], all: boolean, name = ''): void => {
  if (typeof v === 'string') {
    if (all || SECRET_FIELD.test(name)) out.push(v);
  } else if (Array.isArray(v)) {
    for (const x of v) secretLeaves(x, out, all, name);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) secretLeaves(x, out, all || k.toLowerCase() === 'headers', k);
  }
};

/** An `Authorization`-style value: the whole value, the part after the scheme, and SigV4's key id and signature. */
const authParts = (value: string, out: string[]): void => {
  out.push(value);
  const rest = /^\S+\s+(.+)$/.exec(value)?.[1];
  if (rest !== undefined) out.push(rest);
  for (const m of value.matchAll(/\b(?:Credential|Signature)=([^/,\s]+)/g)) if (m[1]) out.push(m[1]);
};

/**
 * Every secret value of one attempt: the connection's own (its apiKey, the secret fields of a
 * JSON key such as a service account's `private_key`, secret-named options, every value of
 * `options.headers`) and every credential the gateway actually sent — credential headers after
 * `authorize` (exchanged access tokens, SigV4 signatures), credential query parameters and the
 * credential fields of token-exchange form bodies (`apikey`, `assertion`).
 */
export const attemptSecrets = (connection: ConnectionSecrets, sent: readonly SentRequest[]): string[] => {
  const out: string[] = [];
  if (connection.apiKey !== undefined && connection.apiKey !== '') {
    out.push(connection.apiKey);
    if (connection.apiKey.trimStart().startsWith('{')) {
      try {
        secretLeaves(JSON.parse(connection.apiKey), out, false);
      } catch {
        // not JSON after all: the whole value is already in the set
      }
    }
  }
  secretLeaves(connection.options, out, false);
  for (const req of sent) {
    for (const [name, value] of Object.entries(req.headers)) if (SECRET_HEADER.test(name)) authParts(value, out);
    const q = req.url.indexOf('?');
    if (q >= 0) for (const [name, value] of new URLSearchParams(req.url.slice(q + 1))) if (SECRET_HEADER.test(name)) out.push(value);
    const type = Object.entries(req.headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
    if (type.includes('x-www-form-urlencoded')) {
      for (const [name, value] of new URLSearchParams(req.body)) if (SECRET_FIELD.test(name)) out.push(value);
    }
  }
  return out;
};
