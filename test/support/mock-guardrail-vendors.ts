import { sigV4Parts } from '../../src/providers/bedrock/sigv4.ts';

/**
 * The guardrail vendors of contract §15 simulated on one listener, each at its own path and in its
 * own wire format, refusing what the real API refuses (a missing or wrong credential, a malformed
 * body, an Azure text over 10,000 characters, a Bedrock signature that does not verify). Each
 * flags its own trigger word, so a test can tell which vendor decided:
 *
 *   openai_moderation `kill-openai`, azure_content_safety `hate-azure`, bedrock_guardrail
 *   `deny-bedrock` (blocked) and US SSNs (masked as {US_SSN}), lakera `inject-lakera`,
 *   model_armor `armor-match`, webhook `block-webhook` (blocked) and `hide-me` (redacted),
 *   presidio: e-mail addresses (EMAIL_ADDRESS spans, code-point offsets).
 *
 * `fault` makes every vendor fail the same way: `slow` (answers after 3 s), `garbage` (200 with a
 * body that is no verdict), `429`.
 */

export const VENDOR_KEY = 'vendor-key-s3cret';
export const AWS_ACCESS_KEY = 'AKIDEXAMPLE';
export const AWS_SECRET = 'aws-secret-s3cret';

export type Fault = 'slow' | 'garbage' | '429' | undefined;

export interface VendorCall {
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface MockVendors {
  url: string;
  calls: VendorCall[];
  fault: Fault;
  /** Added before every answer (a vendor's own latency). */
  latencyMs: number;
  stop(): void;
}

const EMAIL = /[\w.+-]+@[\w-]+\.[\w.]+/g;
const SSN = /\b\d{3}-\d{2}-\d{4}\b/;
const SSN_ALL = new RegExp(SSN.source, 'g');

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Code-point offsets of the e-mail addresses (as Presidio's Python reports them). */
const emailSpans = (text: string): { entity_type: string; start: number; end: number; score: number }[] => {
  const out: { entity_type: string; start: number; end: number; score: number }[] = [];
  for (const m of text.matchAll(EMAIL)) {
    const start = [...text.slice(0, m.index)].length;
    out.push({ entity_type: 'EMAIL_ADDRESS', start, end: start + [...m[0]].length, score: 1 });
  }
  return out;
};

const bearerOk = (req: Request): boolean => req.headers.get('authorization') === `Bearer ${VENDOR_KEY}`;

const sigv4Ok = (req: Request, body: string): boolean => {
  const auth = req.headers.get('authorization') ?? '';
  if (!auth.startsWith(`AWS4-HMAC-SHA256 Credential=${AWS_ACCESS_KEY}/`)) return false;
  const region = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(auth)?.[1] ?? '';
  const signed = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
  const headers: Record<string, string> = {};
  for (const h of signed) headers[h] = h === 'host' ? new URL(req.url).host : (req.headers.get(h) ?? '');
  const date = req.headers.get('x-amz-date') ?? '';
  const now = new Date(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  const parts = sigV4Parts({ method: 'POST', url: req.url, headers, body }, headers, {
    region,
    service: 'bedrock',
    credentials: { accessKeyId: AWS_ACCESS_KEY, secretAccessKey: AWS_SECRET },
    now,
  });
  return parts.authorization === auth;
};

const answer = async (req: Request, path: string, raw: string, body: unknown): Promise<Response> => {
  if (path === '/v1/moderations') {
    if (!bearerOk(req))
      return json({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }, 401);
    const input = isObj(body) ? body.input : undefined;
    const texts =
      typeof input === 'string' ? [input] : Array.isArray(input) && input.every((x) => typeof x === 'string') ? input : undefined;
    if (!texts) return json({ error: { message: "'input' is a required property", type: 'invalid_request_error' } }, 400);
    return json({
      id: 'modr-1',
      model: 'omni-moderation-latest',
      results: texts.map((t: string) => {
        const v = t.includes('kill-openai');
        return {
          flagged: v,
          categories: { violence: v, harassment: false },
          category_scores: { violence: v ? 0.99 : 0.01, harassment: 0 },
        };
      }),
    });
  }
  if (path === '/contentsafety/text:analyze') {
    if (new URL(req.url).searchParams.get('api-version') !== '2024-09-01')
      return json({ error: { code: 'InvalidApiVersion', message: 'unsupported api-version' } }, 404);
    if (req.headers.get('ocp-apim-subscription-key') !== VENDOR_KEY)
      return json({ error: { code: '401', message: 'Access denied due to invalid subscription key.' } }, 401);
    const text = isObj(body) ? body.text : undefined;
    if (typeof text !== 'string' || text.length > 10_000)
      return json({ error: { code: 'InvalidRequestBody', message: 'text must be a string of at most 10000 characters' } }, 400);
    const sev = text.includes('hate-azure') ? 6 : 0;
    return json({
      blocklistsMatch: [],
      categoriesAnalysis: ['Hate', 'SelfHarm', 'Sexual', 'Violence'].map((category) => ({
        category,
        severity: category === 'Hate' ? sev : 0,
      })),
    });
  }
  const bedrock = /^\/guardrail\/([^/]+)\/version\/([^/]+)\/apply$/.exec(path);
  if (bedrock) {
    if (!bearerOk(req) && !sigv4Ok(req, raw)) return json({ message: 'The security token included in the request is invalid.' }, 403);
    if (decodeURIComponent(bedrock[1] ?? '') !== 'gr-test') return json({ message: 'The guardrail was not found.' }, 404);
    const content = isObj(body) && Array.isArray(body.content) ? body.content : undefined;
    const source = isObj(body) ? body.source : undefined;
    const texts = content?.map((c: unknown) => (isObj(c) && isObj(c.text) && typeof c.text.text === 'string' ? c.text.text : undefined));
    if (!texts || texts.some((t) => t === undefined) || (source !== 'INPUT' && source !== 'OUTPUT'))
      return json({ message: '1 validation error detected: content and source are required' }, 400);
    const all = texts.join(' ');
    if (all.includes('deny-bedrock'))
      return json({
        action: 'GUARDRAIL_INTERVENED',
        actionReason: 'Guardrail blocked.',
        outputs: [{ text: 'Sorry, I cannot help with that.' }],
        assessments: [{ topicPolicy: { topics: [{ name: 'Denied', type: 'DENY', action: 'BLOCKED' }] } }],
      });
    if (SSN.test(all))
      return json({
        action: 'GUARDRAIL_INTERVENED',
        outputs: texts.map((t) => ({ text: String(t).replace(SSN_ALL, '{US_SSN}') })),
        assessments: [
          { sensitiveInformationPolicy: { piiEntities: [{ type: 'US_SOCIAL_SECURITY_NUMBER', match: 'x', action: 'ANONYMIZED' }] } },
        ],
      });
    return json({ action: 'NONE', outputs: [], assessments: [] });
  }
  if (path === '/v2/guard') {
    if (!bearerOk(req)) return json({ error: 'Unauthorized' }, 401);
    const messages = isObj(body) && Array.isArray(body.messages) ? body.messages : undefined;
    if (!messages?.every((m: unknown) => isObj(m) && typeof m.role === 'string' && typeof m.content === 'string'))
      return json({ error: 'messages: field required' }, 422);
    const hit = messages.some((m: unknown) => isObj(m) && String(m.content).includes('inject-lakera'));
    return json({ flagged: hit, breakdown: [{ detector_type: 'prompt_attack', detected: hit }] });
  }
  if (path === '/analyze') {
    if (!isObj(body) || typeof body.text !== 'string' || typeof body.language !== 'string')
      return json({ error: 'text and language are required' }, 400);
    return json(emailSpans(body.text));
  }
  const armor = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/templates\/([^/:]+):(sanitizeUserPrompt|sanitizeModelResponse)$/.exec(path);
  if (armor) {
    if (!bearerOk(req))
      return json({ error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }, 401);
    const field = armor[4] === 'sanitizeUserPrompt' ? 'userPromptData' : 'modelResponseData';
    const data = isObj(body) ? body[field] : undefined;
    if (!isObj(data) || typeof data.text !== 'string')
      return json({ error: { code: 400, message: `${field}.text is required`, status: 'INVALID_ARGUMENT' } }, 400);
    const hit = data.text.includes('armor-match');
    return json({
      sanitizationResult: {
        filterMatchState: hit ? 'MATCH_FOUND' : 'NO_MATCH_FOUND',
        filterResults: { pi_and_jailbreak: { piAndJailbreakFilterResult: { matchState: hit ? 'MATCH_FOUND' : 'NO_MATCH_FOUND' } } },
      },
    });
  }
  if (path === '/webhook') {
    if (!isObj(body) || !Array.isArray(body.texts) || typeof body.stage !== 'string') return json({ error: 'bad body' }, 400);
    const texts = body.texts.map(String);
    if (texts.some((t) => t.includes('block-webhook'))) return json({ action: 'block', reason: 'policy' });
    const redactions = texts.flatMap((t, index) => {
      const at = t.indexOf('hide-me');
      return at < 0 ? [] : [{ index, start: at, end: at + 'hide-me'.length }];
    });
    return json(redactions.length > 0 ? { action: 'redact', redactions } : { action: 'allow' });
  }
  return json({ error: 'not found' }, 404);
};

export const startMockVendors = (): MockVendors => {
  const state: MockVendors = { url: '', calls: [], fault: undefined, latencyMs: 0, stop: () => {} };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      const raw = await req.text();
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return json({ error: 'malformed JSON' }, 400);
      }
      state.calls.push({ path, headers: Object.fromEntries(req.headers), body });
      if (state.latencyMs > 0) await Bun.sleep(state.latencyMs);
      if (state.fault === 'slow') await Bun.sleep(3000);
      if (state.fault === 'garbage') return new Response(path === '/analyze' ? '{"results": "nope"}' : 'upstream says hi', { status: 200 });
      if (state.fault === '429') return json({ error: 'rate limited' }, 429);
      return answer(req, path, raw, body);
    },
  });
  state.url = `http://127.0.0.1:${server.port}`;
  state.stop = () => server.stop(true);
  return state;
};
