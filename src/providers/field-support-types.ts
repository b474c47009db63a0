import type { ClientFormat, JsonObject, JsonValue } from '../canonical/types.ts';

/** The shape of src/providers/field-support.ts's rows: the table's columns, the targets a probe is walked at and the outcomes it documents. */

/** The table's family columns. */
export type FamilyColumn = 'openai' | 'anthropic' | 'gemini' | 'bedrock-cohere';

export const COLUMNS: readonly { id: FamilyColumn; title: string }[] = [
  { id: 'openai', title: 'OpenAI family (translated: Messages clients; Mistral, watsonx, OpenAI with `maxTokensField`)' },
  { id: 'anthropic', title: 'Anthropic family' },
  { id: 'gemini', title: 'Gemini / Vertex' },
  { id: 'bedrock-cohere', title: 'Bedrock, Cohere' },
];

/**
 * The connections a probe is sent to: `openai` passes Chat and Responses bodies through (Responses
 * natively); `openai-translated` is OpenAI with `options.maxTokensField` (Chat translated).
 */
export type WalkTarget = 'openai' | 'openai-translated' | 'anthropic' | 'gemini' | 'bedrock' | 'cohere';

/** The targets that stand for each column (a row's probes together must check at least one of each). */
export const COLUMN_TARGETS: Readonly<Record<FamilyColumn, readonly WalkTarget[]>> = {
  openai: ['openai', 'openai-translated'],
  anthropic: ['anthropic'],
  gemini: ['gemini'],
  'bedrock-cohere': ['bedrock', 'cohere'],
};

/** The documented outcome of one probe at one target. */
export type Outcome =
  /** A 400 `invalid_request_error` naming `param`; nothing reaches the upstream. */
  | { refused: string }
  /** The upstream got the request with `path` (dot-separated) set, equal to `equals` when given. */
  | { sent: string; equals?: JsonValue }
  /** The upstream got the request without `path`. */
  | { absent: string };

export interface Probe {
  format: ClientFormat;
  /** The client's body without `model` (the walk sets it per target). */
  body: JsonObject;
  expect: Partial<Record<WalkTarget, Outcome>>;
}

export interface FieldRow {
  /** The first cell (the client field). */
  field: string;
  cells: Readonly<Record<FamilyColumn, string>>;
  probes: readonly Probe[];
}
