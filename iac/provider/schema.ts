import type { TSchema } from '@sinclair/typebox';
import { explain } from './explain.ts';
import { fieldSchema, hasField, isRequiredField } from './api-schemas.ts';
import { type Cty, isUnknown } from './wire.ts';

/**
 * Terraform attributes generated from request-field schemas: the cty type, required/optional and
 * the validation all come from the operation's JSON schema; what is left by hand is only the
 * mapping (which operation, which field, which attribute name).
 */

export type Kind = 'string' | 'number' | 'bool' | 'strlist' | 'strmap' | 'json';
export type CtyType = string | [string, string];

export interface Attr {
  /** Terraform attribute name (snake_case). */
  tf: string;
  /** Request/response field (camelCase; dotted for a nested request field). */
  api: string;
  /** Response field when it differs from the request field (for reading back). */
  read?: string;
  kind: Kind;
  /** An explicit cty type (data source result lists); overrides the kind's. */
  cty?: unknown;
  description: string;
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  writeOnly?: boolean;
  /** Optional in the schema because a write-only form may stand in for it; one of the two is required. */
  eitherRequired?: boolean;
  /** A change replaces the object (the API cannot update it). */
  forceNew?: boolean;
  /** Never sent to the API (provider-side bookkeeping such as api_key_wo_version). */
  local?: boolean;
  /** Not returned by the API: state keeps what was planned. */
  keep?: boolean;
  /** The request schema the value is checked against at validate/plan time. */
  schema?: TSchema;
  /** The operation whose request may change it in place. */
  updatable?: boolean;
  /** A computed value the server may change on any update (e.g. a budget's resetsAt): unknown in an update's plan. */
  volatile?: boolean;
}

const unwrap = (s: TSchema): TSchema => {
  const any = (s as { anyOf?: TSchema[] }).anyOf;
  if (any) {
    const nonNull = any.filter((x) => (x as { type?: string }).type !== 'null');
    if ((s as { int64?: boolean }).int64) return { type: 'integer' } as unknown as TSchema;
    if (nonNull.every((x) => (x as { const?: unknown }).const !== undefined)) return { type: 'string' } as unknown as TSchema;
    if (nonNull.length === 1 && nonNull[0]) return unwrap(nonNull[0]);
  }
  return s;
};

export const kindOf = (s: TSchema): Kind => {
  const u = unwrap(s) as { type?: string; items?: TSchema; patternProperties?: Record<string, TSchema>; additionalProperties?: unknown };
  switch (u.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    case 'array':
      return 'strlist';
    case 'object': {
      const values = Object.values(u.patternProperties ?? {});
      return values.length > 0 && values.every((v) => kindOf(v) === 'string') ? 'strmap' : 'json';
    }
    default:
      return 'json';
  }
};

export const ctyType = (k: Kind): CtyType =>
  k === 'strlist' ? ['list', 'string'] : k === 'strmap' ? ['map', 'string'] : k === 'bool' ? 'bool' : k === 'number' ? 'number' : 'string';

const describe = (s: TSchema, fallback: string): string => {
  const d = (s as { description?: string }).description ?? (unwrap(s) as { description?: string }).description;
  return d ?? fallback;
};

export interface FieldOpts {
  tf?: string;
  /** The update operation: the attribute is updatable in place iff its request has the field. */
  update?: string;
  forceNew?: boolean;
  optionalComputed?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  keep?: boolean;
  read?: string;
  required?: boolean;
}

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** An attribute for a request field of `createOp`, typed and bounded by that field's schema. */
export const field = (createOp: string, api: string, o: FieldOpts = {}): Attr => {
  const schema = fieldSchema(createOp, api);
  if (!schema) throw new Error(`${createOp} has no field ${api}`);
  const required = o.required ?? isRequiredField(createOp, api);
  const updatable = o.update ? hasField(o.update, api) || hasField(o.update, api.split('.').pop() ?? api) : false;
  const tf = o.tf ?? snake(api.split('.').pop() ?? api);
  const attr: Attr = {
    tf,
    api,
    kind: kindOf(schema),
    description: describe(schema, tf),
    schema,
    updatable,
    forceNew: o.forceNew ?? !updatable,
    ...(o.sensitive ? { sensitive: true } : {}),
    ...(o.keep ? { keep: true } : {}),
    ...(o.read ? { read: o.read } : {}),
  };
  if (required) attr.required = true;
  else {
    attr.optional = true;
    if (o.optionalComputed !== false) attr.computed = true;
  }
  return attr;
};

/** A read-only attribute the server computes. */
export const computed = (tf: string, api: string, kind: Kind, description: string, extra: Partial<Attr> = {}): Attr => ({
  tf,
  api,
  kind,
  description,
  computed: true,
  ...extra,
});

// ---- values ----------------------------------------------------------------------------------

export type ApiValue = null | string | number | boolean | ApiValue[] | { [k: string]: ApiValue };

export const toApi = (a: Attr, v: Cty): ApiValue | undefined => {
  if (v === null || isUnknown(v)) return undefined;
  // cty sends a number it cannot hold in a float64 exactly (0.15) as decimal text.
  if (a.kind === 'number' && typeof v === 'string') return Number(v);
  if (a.kind === 'json') {
    if (typeof v !== 'string') return undefined;
    try {
      return JSON.parse(v) as ApiValue;
    } catch {
      return undefined;
    }
  }
  return v as ApiValue;
};

const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );

export const fromApi = (a: Attr, v: ApiValue | undefined, prior: Cty): Cty => {
  if (v === undefined || v === null) return null;
  switch (a.kind) {
    case 'json': {
      // Semantically equal JSON keeps the user's spelling (no diff from key order or spacing).
      if (typeof prior === 'string') {
        try {
          if (canonical(JSON.parse(prior)) === canonical(v)) return prior;
        } catch {
          // the prior text was not JSON: take the server's
        }
      }
      return JSON.stringify(v);
    }
    case 'number': {
      // A fraction goes back as its decimal text, which cty parses exactly (a float64 would
      // differ from the configured decimal and show as a diff).
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isInteger(n) ? n : String(n);
    }
    case 'strlist':
      return Array.isArray(v) ? v.map((x) => String(x)) : [];
    case 'strmap':
      return v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) : {};
    case 'bool':
      return Boolean(v);
    default:
      return String(v);
  }
};

/** Every violation of the field's schema, naming the attribute and saying what is allowed (explain.ts). */
export const violations = (a: Attr, v: Cty): string[] => {
  if (!a.schema || v === null || isUnknown(v)) return [];
  if (a.kind === 'json' && typeof v === 'string') {
    try {
      JSON.parse(v);
    } catch {
      return [`${a.tf} must be a JSON document (use jsonencode)`];
    }
  }
  const value = toApi(a, v);
  if (value === undefined) return [];
  return explain(a.schema, value, a.tf, a.sensitive === true || a.writeOnly === true).slice(0, 3);
};
