/**
 * The gateway's one token estimator. Providers' tokenizers differ and a real one costs
 * milliseconds per large request on the hot path, so the gateway counts characters instead, in two
 * distinct ways:
 *
 * - an estimate (`estimateTokens`), 4 characters per token rounded up: what a guardrail's
 *   `max_input_tokens` rule compares (the request's content characters) and what count-tokens
 *   answers when no upstream can count (the counted fields' JSON, at least 1);
 * - bounds for reservations (rate limits, budgets), never below what a tokenizer counts:
 *   - input (`inputTokenBound`): ASCII at 4 characters per token, rounded up (prose and code
 *     tokenize at 3.5–5 characters per token in the OpenAI and Anthropic tokenizers), and every
 *     other UTF-16 code unit one token — CJK, Cyrillic, accented letters, and an emoji (two code
 *     units) two. The `chars / 4` estimate alone counts 40,000 CJK characters as 10,000 tokens
 *     where tokenizers count 40,000 or more. A client that escapes non-ASCII text in its JSON
 *     (`\u4e2d`, 6 ASCII characters) is counted 1.5 tokens per character, still at least one.
 *   - streamed output, for a stream that ended before the upstream reported its usage
 *     (pipeline/settle.ts counts it as it streams): one token per UTF-16 code unit of text,
 *     reasoning and tool-call arguments streamed — no tokenizer yields more tokens than
 *     characters of ASCII text.
 *
 * Cost: an all-ASCII text is recognised by its UTF-8 length (native, ~0.2 µs for 16 KB) and
 * counted without a scan; other text takes one charCodeAt pass (about 0.5–1.5 ns per character).
 */

/** Characters per token of the estimate, and of ASCII text in the input bound. */
const CHARS_PER_TOKEN = 4;

/** The estimate: one token per 4 characters, rounded up. */
export const estimateTokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** Upper-bound token count of request text (the body as JSON): ceil(ASCII / 4) + non-ASCII code units. */
export const inputTokenBound = (text: string): number => {
  const length = text.length;
  if (Buffer.byteLength(text, 'utf8') === length) return estimateTokens(length);
  let wide = 0;
  for (let i = 0; i < length; i++) if (text.charCodeAt(i) > 0x7f) wide++;
  return estimateTokens(length - wide) + wide;
};
