import { Type as t } from '@sinclair/typebox';
import { connectError } from '../../core/errors.ts';
import { compilePattern } from '../../governance/pattern.ts';
import { GUARDRAIL_DOCUMENTS } from '../../governance/guardrail-scan.ts';
import { PII_TYPES } from '../../governance/pii.ts';
import {
  checkProvider,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_WINDOW_CHARS,
  FAIL_MODES,
  isProviderKind,
  MAX_TIMEOUT_MS,
  MAX_WINDOW_CHARS,
  MIN_WINDOW_CHARS,
  PROVIDER_KINDS,
  inTerraformFields,
  ProviderFieldError,
} from '../../governance/guardrail-providers.ts';
import { CustomerRef, Enum, Int32, PATTERNS, ProjectKey, Str, Success, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource, type PlanRequest, reqList, reqNumber, reqText } from '../resource.ts';

/**
 * Guardrails (contract §3.2): checks of a project's requests (input) and answers (output) —
 * `regex`, `pii` (email, phone, credit_card with Luhn, iban with checksum, ssn, ip_address) and
 * `max_input_tokens` — that block, redact or flag. Enforced by the data planes
 * (src/data-plane/policies/guardrails.ts); docs/governance.md.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Guardrails';
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
export const GUARDRAIL_STAGES = ['input', 'output', 'both'] as const;
export const GUARDRAIL_KINDS = ['regex', 'pii', 'max_input_tokens', ...PROVIDER_KINDS] as const;
export const GUARDRAIL_ACTIONS = ['block', 'redact', 'flag'] as const;
const GuardrailName = () => Str(1, 253, { pattern: PATTERNS.ID, description: 'guardrail name (ID, 1-253), unique within the project' });

const Fields = {
  stage: Enum(GUARDRAIL_STAGES, 'input, output or both'),
  kind: Enum(
    GUARDRAIL_KINDS,
    'regex, pii, max_input_tokens, or a provider kind (webhook, openai_moderation, azure_content_safety, bedrock_guardrail, lakera, presidio, model_armor)',
  ),
  pattern: t.Optional(Str(0, 1024, { description: 'regex kind: an ECMAScript regular expression (1-1024), matched with the u flag' })),
  piiTypes: t.Optional(
    t.Array(Enum(PII_TYPES), {
      maxItems: PII_TYPES.length,
      uniqueItems: true,
      description: 'pii kind: the types to detect (at least one)',
    }),
  ),
  maxTokens: t.Optional(
    Int32({ minimum: 1, maximum: 2_000_000, description: 'max_input_tokens kind: the largest estimated input (1..2000000)' }),
  ),
  action: Enum(GUARDRAIL_ACTIONS, 'block, redact or flag (max_input_tokens: block or flag)'),
  documents: t.Optional(
    Enum(
      GUARDRAIL_DOCUMENTS,
      'input documents the gateway cannot read (a PDF without extractable text, a file by id or URL): scan (default) lets them through, refuse blocks the request',
    ),
  ),
  provider: t.Optional(
    t.Object(
      {
        connectionId: t.Optional(
          Str(0, 253, {
            pattern: '^([a-zA-Z0-9-_.]+)?$',
            description: "a provider connection of the project: its baseUrl and key ('' on update: none)",
          }),
        ),
        url: t.Optional(
          Str(0, 2048, {
            pattern: '^(https?://.+)?$',
            description: "the vendor's endpoint (follows the upstream address rule; '' on update: none)",
          }),
        ),
        authValue: t.Optional(Str(1, 16384, { description: 'the credential; secret: wrapped at rest, never returned' })),
        options: t.Optional(t.Record(t.String(), t.Unknown(), { description: "the kind's options (docs/guardrail-providers.md)" })),
      },
      { additionalProperties: false, description: 'provider kinds: the vendor, its credential and options' },
    ),
  ),
  timeoutMs: t.Optional(
    Int32({
      minimum: 1,
      maximum: MAX_TIMEOUT_MS,
      description: `provider kinds: how long the vendor may take (default ${DEFAULT_TIMEOUT_MS})`,
    }),
  ),
  failMode: t.Optional(
    Enum(
      FAIL_MODES,
      "provider kinds: when the vendor fails, 'closed' refuses, 'open' lets through (default closed on input, open on output)",
    ),
  ),
  windowChars: t.Optional(
    Int32({
      minimum: MIN_WINDOW_CHARS,
      maximum: MAX_WINDOW_CHARS,
      description: `provider kinds, output streams: text checked per window (default ${DEFAULT_WINDOW_CHARS})`,
    }),
  ),
};

export const GuardrailOut = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    name: t.String(),
    stage: t.String(),
    kind: t.String(),
    pattern: t.Optional(t.String()),
    piiTypes: t.Array(t.String()),
    maxTokens: t.Optional(t.Integer()),
    action: t.String(),
    documents: t.String({ description: 'scan or refuse' }),
    provider: t.Optional(
      t.Object({
        connectionId: t.Optional(t.String()),
        url: t.Optional(t.String()),
        options: t.Record(t.String(), t.Unknown()),
        hasAuthValue: t.Boolean({ description: 'whether a credential is stored (it is never returned)' }),
      }),
    ),
    timeoutMs: t.Optional(t.Integer()),
    failMode: t.Optional(t.String()),
    windowChars: t.Optional(t.Integer()),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'Guardrail' },
);

/** A guardrail's rule fields, as stored. */
export interface GuardrailShape {
  stage: string;
  kind: string;
  pattern: string | null;
  piiTypes: string[];
  maxTokens: number | null;
  action: string;
  documents: string;
  /** Provider kinds: the block as saved, the credential apart. */
  provider: { connectionId?: string; url?: string; options?: Record<string, unknown> } | null;
  /** Whether a credential is stored or given. */
  hasAuthValue: boolean;
  timeoutMs: number | null;
  failMode: string | null;
  windowChars: number | null;
}

const PROVIDER_ONLY = ['timeoutMs', 'failMode', 'windowChars'] as const;

const checkProviderKind = (g: GuardrailShape): GuardrailShape => {
  if (!isProviderKind(g.kind)) return g;
  if (g.provider === null) throw connectError('invalid_argument', `invalid field 'provider': required for kind '${g.kind}'`, 'provider');
  if (g.documents === 'refuse')
    throw connectError('invalid_argument', "invalid field 'documents': refuse applies to the built-in kinds", 'documents');
  try {
    checkProvider(
      g.kind,
      {
        connectionId: g.provider.connectionId ?? null,
        url: g.provider.url ?? null,
        options: g.provider.options ?? {},
        hasAuthValue: g.hasAuthValue,
      },
      g.action,
    );
  } catch (e) {
    if (e instanceof ProviderFieldError) throw connectError('invalid_argument', e.message, e.field);
    throw e;
  }
  return { ...g, pattern: null, piiTypes: [], maxTokens: null };
};

/**
 * The rules across fields (the management API and the Terraform provider's plan-time check run this
 * same function); returns the normalised shape or throws `invalid_argument` naming the field.
 */
export const checkGuardrail = (g: GuardrailShape): GuardrailShape => {
  if (isProviderKind(g.kind)) return checkProviderKind(g);
  for (const f of ['provider', ...PROVIDER_ONLY] as const)
    if (g[f] !== null) throw connectError('invalid_argument', `invalid field '${f}': only provider kinds take it`, f);
  if (g.documents === 'refuse' && g.stage === 'output') {
    throw connectError(
      'invalid_argument',
      "invalid field 'documents': refuse applies to input documents; the stage is 'output'",
      'documents',
    );
  }
  if (g.kind === 'regex') {
    if (!g.pattern) throw connectError('invalid_argument', "invalid field 'pattern': required for kind 'regex'", 'pattern');
    const c = compilePattern(g.pattern);
    if (!c.ok) throw connectError('invalid_argument', `invalid field 'pattern': ${c.reason}`, 'pattern');
    return { ...g, piiTypes: [], maxTokens: null };
  }
  if (g.kind === 'pii') {
    if (g.piiTypes.length === 0)
      throw connectError('invalid_argument', "invalid field 'piiTypes': give at least one type for kind 'pii'", 'piiTypes');
    return { ...g, pattern: null, maxTokens: null };
  }
  if (g.maxTokens === null)
    throw connectError('invalid_argument', "invalid field 'maxTokens': required for kind 'max_input_tokens'", 'maxTokens');
  if (g.action === 'redact')
    throw connectError('invalid_argument', "invalid field 'action': max_input_tokens can block or flag, not redact", 'action');
  if (g.stage !== 'input')
    throw connectError('invalid_argument', "invalid field 'stage': max_input_tokens applies to the input only", 'stage');
  return { ...g, pattern: null, piiTypes: [] };
};

const One = t.Object({ guardrail: GuardrailOut });

export const GuardrailOps = {
  CreateGuardrail: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateGuardrail',
    summary: 'Create a guardrail of a project',
    notes:
      "kind regex needs pattern; pii needs piiTypes; max_input_tokens needs maxTokens, stage 'input' and action block or flag; a provider kind needs provider (docs/guardrail-providers.md) and action block or flag, its url follows the upstream address rule, its authValue is wrapped at rest and never returned. A blocked request is 400 invalid_request_error / guardrail_blocked naming the guardrail; redact replaces a match with [REDACTED:<type>] (the guardrail's name for regex); flag records the guardrail's name on the request record (guardrail_flags). Names are unique within the project (already_exists).",
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'guardrail' },
    input: t.Object({ ...Addr, name: GuardrailName(), ...Fields }, { additionalProperties: false }),
    output: One,
  }),
  GetGuardrail: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetGuardrail',
    summary: 'A guardrail by name',
    permission: 'project_member',
    input: t.Object({ ...Addr, name: GuardrailName() }, { additionalProperties: false }),
    output: One,
  }),
  ListGuardrails: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListGuardrails',
    summary: "A project's guardrails (ordered by name)",
    permission: 'project_member',
    input: t.Object(Addr, { additionalProperties: false }),
    output: t.Object({ guardrails: t.Array(GuardrailOut) }),
  }),
  UpdateGuardrail: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateGuardrail',
    summary: 'Update a guardrail (unset fields stay unchanged; the same rules as CreateGuardrail apply to the result)',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'guardrail' },
    input: t.Object(
      {
        ...Addr,
        name: GuardrailName(),
        stage: t.Optional(Fields.stage),
        kind: t.Optional(Fields.kind),
        pattern: Fields.pattern,
        piiTypes: Fields.piiTypes,
        maxTokens: Fields.maxTokens,
        action: t.Optional(Fields.action),
        documents: Fields.documents,
        provider: Fields.provider,
        timeoutMs: Fields.timeoutMs,
        failMode: Fields.failMode,
        windowChars: Fields.windowChars,
      },
      { additionalProperties: false },
    ),
    output: One,
  }),
  DeleteGuardrail: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteGuardrail',
    summary: 'Delete a guardrail',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'guardrail' },
    input: t.Object({ ...Addr, name: GuardrailName() }, { additionalProperties: false }),
    output: Success(),
  }),
};

const G = GuardrailOps;
export const GuardrailResources = {
  guardrail: defineResource({
    owner: 'project',
    audit: 'guardrail',
    stored: [{ table: 'guardrails', removal: 'delete' }],
    change: { kind: 'GUARDRAIL', entity: 'guardrail', keepsApiKeys: true },
    /** Guardrails (contract §3.2). */
    document: {
      section: 'guardrails',
      row: (secret) =>
        t.Object({
          id: t.String(),
          projectUuid: t.String(),
          name: t.String(),
          stage: t.String(),
          kind: t.String(),
          pattern: t.Union([t.String(), t.Null()]),
          piiTypes: t.Array(t.String()),
          maxTokens: t.Union([t.Number(), t.Null()]),
          action: t.String(),
          /** Optional: a document from a management plane before the field has none (`scan`). */
          documents: t.Optional(t.String()),
          /** Provider kinds (contract §15); absent from a management plane before them. */
          providerConnectionId: t.Optional(t.String()),
          providerUrl: t.Optional(t.String()),
          /** Sealed whole: a webhook's `headers` may carry credentials. */
          providerOptions: t.Optional(t.Union([secret.json, t.Null()])),
          authValue: t.Optional(t.Union([secret.text, t.Null()])),
          timeoutMs: t.Optional(t.Union([t.Number(), t.Null()])),
          failMode: t.Optional(t.Union([t.String(), t.Null()])),
          windowChars: t.Optional(t.Union([t.Number(), t.Null()])),
          allowPrivate: t.Optional(t.Boolean()),
        }),
    },
    terraform: {
      type: 'gateway_guardrail',
      description:
        "A guardrail of a project: regex, PII or maximum input tokens, or a vendor's verdict (provider kinds); block, redact or flag; on input, output or both.",
      create: G.CreateGuardrail,
      get: G.GetGuardrail,
      update: G.UpdateGuardrail,
      delete: G.DeleteGuardrail,
      envelope: 'guardrail',
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'name' }],
      args: [
        { api: 'stage', update: true },
        { api: 'kind', update: true },
        { api: 'pattern', update: true },
        { api: 'piiTypes', update: true },
        { api: 'maxTokens', update: true },
        { api: 'action', update: true },
        { api: 'documents', update: true },
        { api: 'provider.connectionId', tf: 'provider_connection_id', update: true, optionalComputed: false },
        { api: 'provider.url', tf: 'provider_url', update: true, optionalComputed: false },
        { api: 'provider.options', tf: 'provider_options', update: true, optionalComputed: false },
        {
          api: 'provider.authValue',
          tf: 'provider_auth_value',
          update: true,
          optionalComputed: false,
          sensitive: true,
          keep: true,
          writeOnlyForm: true,
          description: "the vendor's credential; kept in state as given, never read back (an out-of-band change is not detected)",
        },
        { api: 'timeoutMs', update: true, optionalComputed: false },
        { api: 'failMode', update: true, optionalComputed: false },
        { api: 'windowChars', update: true, optionalComputed: false },
      ],
      check: (r) => {
        try {
          checkPlan(r);
        } catch (e) {
          throw inTerraformFields(e);
        }
      },
    },
  }),
};

/** The Terraform plan-time check: the configuration as a create request, through `checkGuardrail`. */
const checkPlan = (r: PlanRequest): void => {
  const conn = reqText(r['provider.connectionId']) || null;
  const url = reqText(r['provider.url']) || null;
  const options = r['provider.options'];
  const hasProvider = conn !== null || url !== null || options !== undefined || r['provider.authValue'] !== undefined;
  checkGuardrail({
    stage: reqText(r.stage) ?? '',
    kind: reqText(r.kind) ?? '',
    pattern: reqText(r.pattern),
    piiTypes: reqList(r.piiTypes),
    maxTokens: reqNumber(r.maxTokens),
    action: reqText(r.action) ?? '',
    documents: reqText(r.documents) ?? 'scan',
    provider: hasProvider
      ? {
          ...(conn !== null ? { connectionId: conn } : {}),
          ...(url !== null ? { url } : {}),
          ...(options !== null && typeof options === 'object' && !Array.isArray(options)
            ? { options: Object.fromEntries(Object.entries(options)) }
            : {}),
        }
      : null,
    hasAuthValue: r['provider.authValue'] !== undefined,
    timeoutMs: reqNumber(r.timeoutMs),
    failMode: reqText(r.failMode),
    windowChars: reqNumber(r.windowChars),
  });
};
