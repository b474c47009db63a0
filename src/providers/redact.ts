/**
 * Masks anything in an upstream body that looks like a credential before it is kept on a
 * GatewayError or a record. Deliberately over-eager: a masked id is cheap, a leaked key is not.
 */

export const MAX_UPSTREAM_EXCERPT = 2000;

const MASK = '***';

/** Well-known key prefixes (OpenAI/Anthropic `sk-`, Groq `gsk_`, xAI, HF, NVIDIA, Perplexity, …). */
const PREFIXED_KEY =
  /\b(sk|sk_live|sk_test|rk|pk|gsk|xai|hf|nvapi|pplx|csk|r8|fw|ghp|gho|github_pat|glpat|AKIA|ASIA)([-_])[A-Za-z0-9_*\-]{6,}/g;
const AWS_ACCESS_KEY_ID = /\b(AKIA|ASIA)[A-Z0-9]{12,}\b/g;
const GOOGLE_KEY = /\bAIza[0-9A-Za-z_\-]{10,}/g;
const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
/** `"api_key": "…"`, `x-api-key: …`, `token=…` style pairs. */
const NAMED_SECRET =
  /(\b(?:api[_-]?key|x-api-key|api-key|authorization|access[_-]?token|refresh[_-]?token|client[_-]?secret|secret|password|token)["']?\s*[:=]\s*["']?)((?:Bearer|Basic)\s+)?([^\s"',;&}]+)/gi;
/** Long runs of base64/base64url/hex with mixed character classes (high entropy). */
const LONG_RUN = /[A-Za-z0-9+/_\-]{32,}={0,2}/g;

const looksRandom = (s: string): boolean => {
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((r) => r.test(s)).length;
  if (classes >= 3) return true;
  // Pure hex or lower-case+digits of key length (e.g. 40+ hex chars) is also suspicious.
  return s.length >= 40 && classes >= 2 && /^[a-f0-9]+$/i.test(s);
};

/**
 * Returns `text` with key-like substrings masked. `secrets` are exact values (e.g. the
 * connection's API key) that are masked wherever they occur, whatever they look like.
 */
export const redact = (text: string, secrets: readonly string[] = []): string => {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join(MASK);
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
