import { connectError, GatewayError } from '../core/errors.ts';

/**
 * Guardrail providers (contract §15): guardrail kinds whose verdict comes from a vendor's service —
 * the gateway's own webhook shape, OpenAI moderation, Azure AI Content Safety, Bedrock Guardrails,
 * Lakera Guard, Presidio's analyzer and Google Model Armor. This module is the framework-free half:
 * the kinds, their options and the rules a saved guardrail must satisfy (the management API and the
 * Terraform provider's plan-time check both run `checkProvider`). The calls themselves are the data
 * plane's (src/data-plane/guardrail-vendors/).
 */

export const PROVIDER_KINDS = [
  'webhook',
  'openai_moderation',
  'azure_content_safety',
  'bedrock_guardrail',
  'lakera',
  'presidio',
  'model_armor',
] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export const FAIL_MODES = ['closed', 'open'] as const;
export type FailMode = (typeof FAIL_MODES)[number];

export const DEFAULT_TIMEOUT_MS = 2000;
export const MAX_TIMEOUT_MS = 60_000;
export const DEFAULT_WINDOW_CHARS = 1000;
export const MIN_WINDOW_CHARS = 100;
export const MAX_WINDOW_CHARS = 100_000;

export const isProviderKind = (kind: string): kind is ProviderKind => (PROVIDER_KINDS as readonly string[]).includes(kind);

/** Azure AI Content Safety's text categories. */
export const AZURE_CATEGORIES = ['Hate', 'SelfHarm', 'Sexual', 'Violence'] as const;

/** A provider block as saved (the secret apart: `hasAuthValue` says whether one is stored or given). */
export interface ProviderShape {
  connectionId: string | null;
  url: string | null;
  options: Record<string, unknown>;
  hasAuthValue: boolean;
}

/** What a provider check refuses: the field (dotted) and why. */
export class ProviderFieldError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`invalid field '${field}': ${reason}`);
  }
}

const fail = (field: string, reason: string): never => {
  throw new ProviderFieldError(field, reason);
};

const optText = (o: Record<string, unknown>, k: string, required: boolean, pattern?: RegExp): string | undefined => {
  const v = o[k];
  if (v === undefined) return required ? fail(`provider.options.${k}`, 'required for this kind') : undefined;
  if (typeof v !== 'string' || v === '' || v.length > 512) return fail(`provider.options.${k}`, 'must be a non-empty string (at most 512)');
  if (pattern && !pattern.test(v)) return fail(`provider.options.${k}`, `must match ${pattern.source}`);
  return v;
};

const optNumber = (o: Record<string, unknown>, k: string, min: number, max: number, integer: boolean): void => {
  const v = o[k];
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v)))
    fail(`provider.options.${k}`, `must be ${integer ? 'an integer' : 'a number'} in ${min}..${max}`);
};

const optList = (o: Record<string, unknown>, k: string, allowed?: readonly string[]): void => {
  const v = o[k];
  if (v === undefined) return;
  if (!Array.isArray(v) || v.length === 0 || v.length > 64 || !v.every((x) => typeof x === 'string' && x !== '' && x.length <= 128))
    fail(`provider.options.${k}`, 'must be a non-empty list of strings (at most 64)');
  if (allowed)
    for (const x of v as string[]) if (!allowed.includes(x)) fail(`provider.options.${k}`, `'${x}' is not one of ${allowed.join(', ')}`);
};

/** Path segments and template ids: no slash, no query, nothing to escape. */
const SEGMENT = /^[A-Za-z0-9._-]{1,128}$/;
const REGION = /^[a-z0-9-]{1,32}$/;
const HTTP_URL = /^https?:\/\/[^\s]+$/i;

const OPTIONS: Record<ProviderKind, readonly string[]> = {
  webhook: ['headers'],
  openai_moderation: ['model', 'categories'],
  azure_content_safety: ['severityThreshold', 'categories', 'apiVersion'],
  bedrock_guardrail: ['guardrailIdentifier', 'guardrailVersion', 'region'],
  lakera: ['projectId'],
  presidio: ['entities', 'scoreThreshold', 'language'],
  model_armor: ['project', 'location', 'template'],
};

/**
 * The rules of a provider guardrail (kind, provider block, action); throws a ProviderFieldError naming
 * the field. Credentials: a connection's key or `authValue` — required where the vendor's API takes
 * one (webhook and Presidio may run without).
 */
export const checkProvider = (kind: ProviderKind, p: ProviderShape, action: string): void => {
  if (action === 'redact')
    fail('action', "provider kinds take 'block' (enforce the vendor's verdict, its redactions included) or 'flag' (record only)");
  if (p.connectionId !== null && p.url !== null && kind !== 'azure_content_safety' && kind !== 'presidio')
    fail('provider.url', 'give either a connectionId or a url');
  if (p.url !== null && (!HTTP_URL.test(p.url) || p.url.length > 2048)) fail('provider.url', 'must be an http or https URL (at most 2048)');
  const known = OPTIONS[kind];
  for (const k of Object.keys(p.options))
    if (!known.includes(k)) fail(`provider.options.${k}`, `unknown for kind '${kind}' (known: ${known.join(', ')})`);
  const o = p.options;
  const credential = p.connectionId !== null || p.hasAuthValue;
  const needsUrl = (): void => {
    if (p.url === null && p.connectionId === null)
      fail('provider.url', `required for kind '${kind}' (or a connectionId whose baseUrl is the endpoint)`);
  };
  const needsCredential = (): void => {
    if (!credential) fail('provider.authValue', `kind '${kind}' needs a credential: provider.authValue or a connectionId`);
  };
  switch (kind) {
    case 'webhook':
      if (p.url === null) fail('provider.url', "required for kind 'webhook'");
      if (p.connectionId !== null) fail('provider.connectionId', "kind 'webhook' takes a url and an optional authValue");
      if (o.headers !== undefined) {
        const h = o.headers;
        if (h === null || typeof h !== 'object' || Array.isArray(h) || !Object.values(h).every((v) => typeof v === 'string'))
          fail('provider.options.headers', 'must be an object of header names to string values');
      }
      return;
    case 'openai_moderation':
      needsCredential();
      optText(o, 'model', false);
      optList(o, 'categories');
      return;
    case 'azure_content_safety':
      needsUrl();
      needsCredential();
      optNumber(o, 'severityThreshold', 0, 7, true);
      optList(o, 'categories', AZURE_CATEGORIES);
      optText(o, 'apiVersion', false, /^[0-9a-z.-]{1,32}$/);
      return;
    case 'bedrock_guardrail':
      needsCredential();
      optText(o, 'guardrailIdentifier', true, /^[A-Za-z0-9:/._-]{1,2048}$/);
      optText(o, 'guardrailVersion', true, /^(DRAFT|[1-9][0-9]{0,7})$/);
      optText(o, 'region', p.connectionId === null && p.url === null, REGION);
      return;
    case 'lakera':
      needsCredential();
      optText(o, 'projectId', false);
      return;
    case 'presidio':
      needsUrl();
      optList(o, 'entities');
      optNumber(o, 'scoreThreshold', 0, 1, false);
      optText(o, 'language', false, /^[a-z]{2}(-[A-Za-z]{2})?$/);
      return;
    case 'model_armor':
      needsCredential();
      optText(o, 'project', true, SEGMENT);
      optText(o, 'location', true, REGION);
      optText(o, 'template', true, SEGMENT);
      return;
  }
};

/** A guardrail's fail mode: as saved, else `closed` on input and `open` on output. */
export const failModeOf = (saved: string | null | undefined, stage: 'input' | 'output'): FailMode =>
  saved === 'open' || saved === 'closed' ? saved : stage === 'input' ? 'closed' : 'open';

/** A provider connection as a provider guardrail uses it (its key already unwrapped). */
export interface GuardrailConnection {
  name: string;
  provider: string;
  baseUrl?: string;
  apiKey?: string;
  options: Readonly<Record<string, unknown>>;
  allowPrivate: boolean;
}

/** A provider guardrail as a data plane's snapshot holds it (contract §15). */
export interface ProviderGuardrail {
  name: string;
  stage: 'input' | 'output' | 'both';
  kind: ProviderKind;
  /** `block`: the vendor's verdict is enforced (its redactions too); `flag`: recorded only. */
  action: 'block' | 'flag';
  url?: string;
  /** The connection named by `provider.connectionId`; `connectionId` alone when it is not in the snapshot. */
  connection?: GuardrailConnection;
  connectionId?: string;
  authValue?: string;
  options: Readonly<Record<string, unknown>>;
  timeoutMs: number;
  /** As saved; null: closed on input, open on output (`failModeOf`). */
  failMode: FailMode | null;
  windowChars: number;
  /** The url may be an inward address (the platform admin's save, or the operator's setting). */
  allowPrivate: boolean;
}

/**
 * A provider field's error as the Terraform provider words it: attributes are named by the field's
 * last part (provider_options, provider_auth_value…), so an option's error is on `options` (naming
 * the option), a missing block on `url`. Other errors are returned as they are.
 */
export const inTerraformFields = (e: unknown): unknown => {
  const field = e instanceof GatewayError ? (e.param ?? '') : '';
  if (!(e instanceof GatewayError) || (field !== 'provider' && !field.startsWith('provider.'))) return e;
  const option = field.startsWith('provider.options.') ? field.slice('provider.options.'.length) : undefined;
  const param = field === 'provider' ? 'url' : option !== undefined ? 'options' : field.slice('provider.'.length);
  const message = e.message
    .replace(`invalid field '${field}': `, `invalid field '${param}': ${option !== undefined ? `'${option}' ` : ''}`)
    .replace(/provider\.(authValue|connectionId|url)/g, '$1');
  return connectError('invalid_argument', message, param);
};
