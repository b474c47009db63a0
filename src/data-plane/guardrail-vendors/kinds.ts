import type { ProviderGuardrail, ProviderKind } from '../../governance/guardrail-providers.ts';
import { signSigV4 } from '../../providers/bedrock/sigv4.ts';
import type { UpstreamHttpRequest } from '../../providers/types.ts';
import { joinTexts, redactSpans, type Span } from './spans.ts';

/**
 * Each provider kind's wire format (contract §15; docs/guardrail-providers.md): the request for a
 * set of texts (one request's or one answer's), and the verdict read from the vendor's answer. An
 * answer that is not the vendor's verdict shape throws a VendorFault (the guardrail's fail mode
 * decides); nothing here performs I/O (./call.ts does).
 */

export type Stage = 'input' | 'output';

/** The request a text set belongs to (the webhook's body carries it). */
export interface CallMeta {
  requestId: string;
  customerId: string | null;
  projectId: string | null;
  model: string | null;
}

export type Verdict =
  | { action: 'allow' }
  | { action: 'block'; reason: string }
  /** The texts rewritten (same count and order as given). */
  | { action: 'redact'; texts: string[]; reason: string };

/** A vendor that could not give a verdict: unreachable, slow, refusing, or answering garbage. */
export class VendorFault extends Error {}

const garbage = (kind: ProviderKind, what: string): VendorFault => new VendorFault(`the answer is not a ${kind} verdict (${what})`);

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (o: Readonly<Record<string, unknown>>, k: string): string | undefined =>
  typeof o[k] === 'string' ? (o[k] as string) : undefined;
const num = (o: Readonly<Record<string, unknown>>, k: string): number | undefined =>
  typeof o[k] === 'number' ? (o[k] as number) : undefined;
const list = (o: Readonly<Record<string, unknown>>, k: string): string[] | undefined =>
  Array.isArray(o[k]) ? (o[k] as unknown[]).filter((x): x is string => typeof x === 'string') : undefined;

const trim = (u: string): string => u.replace(/\/+$/, '');
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** The guardrail's credential: its own `authValue`, else its connection's key. */
const credential = (g: ProviderGuardrail): string | undefined => g.authValue ?? g.connection?.apiKey;

const missing = (what: string): VendorFault => new VendorFault(`${what} is missing (the guardrail's configuration)`);

/** Base URL: the guardrail's url, its connection's baseUrl, else the vendor's public default. */
const base = (g: ProviderGuardrail, fallback?: string): string => {
  const b = g.url ?? g.connection?.baseUrl ?? fallback;
  if (b === undefined) throw missing(g.connectionId !== undefined ? `connection '${g.connectionId}'` : 'the url');
  return trim(b);
};

const bearer = (g: ProviderGuardrail, required: boolean): Record<string, string> => {
  const c = credential(g);
  if (c === undefined) {
    if (required) throw missing(g.connectionId !== undefined ? `connection '${g.connectionId}' or its key` : 'the credential');
    return {};
  }
  return { authorization: `Bearer ${c}` };
};

const post = (url: string, headers: Record<string, string>, body: unknown): UpstreamHttpRequest => ({
  url,
  method: 'POST',
  headers: { ...JSON_HEADERS, ...headers },
  body: JSON.stringify(body),
});

/** Azure AI Content Safety takes at most 10,000 characters per call. */
export const AZURE_MAX_CHARS = 10_000;

/**
 * The requests for one check (several when the vendor's limit splits the text: Azure), built from
 * the texts. `now` dates a SigV4 signature.
 */
export const buildRequests = (
  g: ProviderGuardrail,
  texts: readonly string[],
  stage: Stage,
  meta: CallMeta,
  now: Date,
): UpstreamHttpRequest[] => {
  const o = g.options;
  switch (g.kind) {
    case 'webhook': {
      const headers = isObj(o.headers)
        ? Object.fromEntries(Object.entries(o.headers).filter((e): e is [string, string] => typeof e[1] === 'string'))
        : {};
      return [post(base(g), { ...headers, ...bearer(g, false) }, { stage, texts, ...meta })];
    }
    case 'openai_moderation': {
      const b = base(g, 'https://api.openai.com/v1');
      const url = b.endsWith('/v1') ? `${b}/moderations` : `${b}/v1/moderations`;
      return [post(url, bearer(g, true), { model: str(o, 'model') ?? 'omni-moderation-latest', input: [...texts] })];
    }
    case 'azure_content_safety': {
      const key = credential(g);
      if (key === undefined) throw missing('the subscription key');
      const url = `${base(g)}/contentsafety/text:analyze?api-version=${str(o, 'apiVersion') ?? '2024-09-01'}`;
      const text = joinTexts(texts).text;
      const out: UpstreamHttpRequest[] = [];
      for (let from = 0; from < text.length || out.length === 0; from += AZURE_MAX_CHARS) {
        const body = {
          text: text.slice(from, from + AZURE_MAX_CHARS),
          ...(list(o, 'categories') ? { categories: list(o, 'categories') } : {}),
          outputType: 'FourSeverityLevels',
        };
        out.push(post(url, { 'ocp-apim-subscription-key': key }, body));
      }
      return out;
    }
    case 'bedrock_guardrail': {
      const region = str(o, 'region') ?? (g.connection ? str(g.connection.options, 'region') : undefined);
      const b = base(g, region !== undefined ? `https://bedrock-runtime.${region}.amazonaws.com` : undefined);
      const id = encodeURIComponent(str(o, 'guardrailIdentifier') ?? '');
      const url = `${b}/guardrail/${id}/version/${encodeURIComponent(str(o, 'guardrailVersion') ?? '')}/apply`;
      const req = post(url, {}, { source: stage === 'input' ? 'INPUT' : 'OUTPUT', content: texts.map((text) => ({ text: { text } })) });
      const accessKeyId = g.authValue === undefined && g.connection ? str(g.connection.options, 'accessKeyId') : undefined;
      if (accessKeyId === undefined) return [{ ...req, headers: { ...req.headers, ...bearer(g, true) } }];
      const secret = g.connection?.apiKey;
      if (region === undefined || secret === undefined) throw missing('the region or secret access key of the connection');
      const headers = signSigV4(req, {
        region,
        service: 'bedrock',
        credentials: { accessKeyId, secretAccessKey: secret },
        now,
        contentSha256: true,
      });
      return [{ ...req, headers }];
    }
    case 'lakera': {
      const role = stage === 'input' ? 'user' : 'assistant';
      const projectId = str(o, 'projectId');
      return [
        post(`${base(g, 'https://api.lakera.ai')}/v2/guard`, bearer(g, true), {
          messages: texts.map((content) => ({ role, content })),
          ...(projectId !== undefined ? { project_id: projectId } : {}),
          breakdown: true,
        }),
      ];
    }
    case 'presidio':
      return [
        post(`${base(g)}/analyze`, bearer(g, false), {
          text: joinTexts(texts).text,
          language: str(o, 'language') ?? 'en',
          ...(list(o, 'entities') ? { entities: list(o, 'entities') } : {}),
          score_threshold: num(o, 'scoreThreshold') ?? 0.5,
        }),
      ];
    case 'model_armor': {
      const location = str(o, 'location') ?? '';
      const b = base(g, `https://modelarmor.${location}.rep.googleapis.com`);
      const path = `/v1/projects/${str(o, 'project') ?? ''}/locations/${location}/templates/${str(o, 'template') ?? ''}`;
      const text = joinTexts(texts).text;
      return [
        stage === 'input'
          ? post(`${b}${path}:sanitizeUserPrompt`, bearer(g, true), { userPromptData: { text } })
          : post(`${b}${path}:sanitizeModelResponse`, bearer(g, true), { modelResponseData: { text } }),
      ];
    }
  }
};

/** Every `action` value in a Bedrock assessment (policies nest lists of findings, each with its action). */
const bedrockActions = (v: unknown, out: Set<string>, depth = 0): void => {
  if (depth > 8) return;
  if (Array.isArray(v)) for (const x of v) bedrockActions(x, out, depth + 1);
  else if (isObj(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'action' && typeof x === 'string') out.add(x);
      else bedrockActions(x, out, depth + 1);
    }
  }
};

/** The verdict of one answer (`answers` in the order of `buildRequests`' requests). */
export const readVerdict = (g: ProviderGuardrail, texts: readonly string[], answers: readonly unknown[]): Verdict => {
  const kind = g.kind;
  const o = g.options;
  const [a] = answers;
  switch (kind) {
    case 'webhook': {
      if (!isObj(a)) throw garbage(kind, 'not an object');
      const action = a.action;
      const reason = str(a, 'reason') ?? `the webhook answered ${String(action)}`;
      if (action === 'allow') return { action: 'allow' };
      if (action === 'block') return { action: 'block', reason };
      if (action !== 'redact' || !Array.isArray(a.redactions))
        throw garbage(kind, 'action must be allow, block or redact (with redactions)');
      const spans: Span[] = [];
      for (const r of a.redactions) {
        if (!isObj(r)) throw garbage(kind, 'a redaction is not an object');
        const index = num(r, 'index');
        const start = num(r, 'start');
        const end = num(r, 'end');
        const text = index !== undefined ? texts[index] : undefined;
        if (
          text === undefined ||
          start === undefined ||
          end === undefined ||
          !Number.isInteger(start) ||
          !Number.isInteger(end) ||
          start < 0 ||
          end < start ||
          end > text.length
        )
          throw garbage(kind, 'a redaction is out of range');
        spans.push({ index: index as number, start, end, label: g.name });
      }
      return { action: 'redact', texts: redactSpans(texts, spans), reason };
    }
    case 'openai_moderation': {
      if (!isObj(a) || !Array.isArray(a.results) || a.results.length !== texts.length) throw garbage(kind, 'results');
      const only = list(o, 'categories');
      const hit: string[] = [];
      for (const r of a.results) {
        if (!isObj(r) || typeof r.flagged !== 'boolean' || !isObj(r.categories)) throw garbage(kind, 'a result');
        const cats = Object.entries(r.categories)
          .filter(([, v]) => v === true)
          .map(([k]) => k);
        if (only) hit.push(...cats.filter((c) => only.includes(c)));
        else if (r.flagged) hit.push(...(cats.length > 0 ? cats : ['flagged']));
      }
      return hit.length > 0 ? { action: 'block', reason: `flagged: ${[...new Set(hit)].join(', ')}` } : { action: 'allow' };
    }
    case 'azure_content_safety': {
      const threshold = num(o, 'severityThreshold') ?? 4;
      const hit = new Set<string>();
      for (const x of answers) {
        if (!isObj(x) || !Array.isArray(x.categoriesAnalysis)) throw garbage(kind, 'categoriesAnalysis');
        for (const c of x.categoriesAnalysis) {
          if (!isObj(c) || typeof c.category !== 'string' || typeof c.severity !== 'number') throw garbage(kind, 'a category');
          if (c.severity >= threshold) hit.add(`${c.category} (severity ${c.severity})`);
        }
      }
      return hit.size > 0 ? { action: 'block', reason: [...hit].join(', ') } : { action: 'allow' };
    }
    case 'bedrock_guardrail': {
      if (!isObj(a) || typeof a.action !== 'string') throw garbage(kind, 'action');
      if (a.action === 'NONE') return { action: 'allow' };
      if (a.action !== 'GUARDRAIL_INTERVENED') throw garbage(kind, `action ${a.action}`);
      const reason = str(a, 'actionReason') ?? 'the guardrail intervened';
      const actions = new Set<string>();
      bedrockActions(a.assessments, actions);
      const outputs = Array.isArray(a.outputs) ? a.outputs.map((x) => (isObj(x) ? str(x, 'text') : undefined)) : [];
      const masked = outputs.every((x): x is string => x !== undefined) ? outputs : [];
      // Only masking (ANONYMIZED), and the masked output maps onto the texts: use it; anything else blocks.
      if (actions.has('BLOCKED') || !actions.has('ANONYMIZED') || masked.length === 0) return { action: 'block', reason };
      if (masked.length === texts.length) return { action: 'redact', texts: masked, reason };
      if (texts.length === 1) return { action: 'redact', texts: [masked.join('')], reason };
      return { action: 'block', reason: `${reason} (the masked output does not map onto the texts)` };
    }
    case 'lakera': {
      if (!isObj(a) || typeof a.flagged !== 'boolean') throw garbage(kind, 'flagged');
      if (!a.flagged) return { action: 'allow' };
      const detectors = Array.isArray(a.breakdown)
        ? a.breakdown.filter((b) => isObj(b) && b.detected === true).map((b) => (isObj(b) ? str(b, 'detector_type') : undefined))
        : [];
      const names = detectors.filter((d): d is string => d !== undefined);
      return { action: 'block', reason: names.length > 0 ? `flagged: ${[...new Set(names)].join(', ')}` : 'flagged' };
    }
    case 'presidio': {
      if (!Array.isArray(a)) throw garbage(kind, 'not a list of results');
      const threshold = num(o, 'scoreThreshold') ?? 0.5;
      const joined = joinTexts(texts);
      const found: { start: number; end: number; label: string }[] = [];
      for (const r of a) {
        if (!isObj(r)) throw garbage(kind, 'a result');
        const type = str(r, 'entity_type');
        const start = num(r, 'start');
        const end = num(r, 'end');
        const score = num(r, 'score');
        if (type === undefined || start === undefined || end === undefined || score === undefined || end < start)
          throw garbage(kind, 'a result');
        if (score >= threshold) found.push({ start, end, label: type });
      }
      if (found.length === 0) return { action: 'allow' };
      const spans = joined.spansOf(found);
      if (spans === undefined) throw garbage(kind, 'a result is out of range');
      return { action: 'redact', texts: redactSpans(texts, spans), reason: `found: ${[...new Set(found.map((f) => f.label))].join(', ')}` };
    }
    case 'model_armor': {
      const r = isObj(a) ? a.sanitizationResult : undefined;
      const state = isObj(r) ? r.filterMatchState : undefined;
      if (state === 'NO_MATCH_FOUND') return { action: 'allow' };
      if (state !== 'MATCH_FOUND') throw garbage(kind, 'sanitizationResult.filterMatchState');
      const results = isObj(r) && isObj(r.filterResults) ? Object.entries(r.filterResults) : [];
      const filters = results.filter(([, v]) => JSON.stringify(v).includes('"MATCH_FOUND"')).map(([k]) => k);
      return { action: 'block', reason: filters.length > 0 ? `match found: ${filters.join(', ')}` : 'match found' };
    }
  }
};
