import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { connectError, type GatewayError } from '../core/errors.ts';

/**
 * A management request's body on the Connect wire (connect.ts mounts the operations): prepared
 * along its operation's schema before validation (spellings, int64 strings, what PostgreSQL
 * cannot store), and a failed validation turned into an `invalid_argument` message naming the
 * field.
 */

const camel = (k: string): string => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export interface SchemaLike {
  type?: string;
  properties?: Record<string, TSchema>;
  patternProperties?: Record<string, TSchema>;
  items?: TSchema;
  anyOf?: TSchema[];
  int64?: boolean;
  minimum?: number;
  maximum?: number;
  const?: unknown;
}

const MAX_DEPTH = 32;
const pathOf = (path: string, key: string | number): string => (path ? `${path}.${key}` : String(key));

/** Why a string cannot be stored (PostgreSQL text and jsonb hold neither NUL nor a lone surrogate), or undefined. */
const unstorable = (s: string): string | undefined =>
  s.includes('\u0000')
    ? 'contains a NUL character'
    : s.isWellFormed()
      ? undefined
      : 'contains a lone UTF-16 surrogate (not valid Unicode text)';

/** A request body as prepared for authorization and validation, with the first problem found in it. */
export interface PreparedBody {
  value: unknown;
  /** `invalid_argument` naming the field; raised only after authorization. */
  problem: GatewayError | undefined;
}

/**
 * Prepares a request body for validation, walking it along its schema:
 * - snake_case property names are renamed to the schema's camelCase names (declared properties
 *   only — map keys such as labels are user data and stay as sent);
 * - an `int64` given as a digit string becomes a number when the field has bounds, so the bounds
 *   apply to both spellings;
 * - strings (values and map keys) with a NUL character or a lone surrogate, which PostgreSQL
 *   cannot store, and absurd nesting are found here: the first one is returned as `problem`,
 *   naming the field — not thrown, so that authorization still runs first.
 */
export const prepareBody = (body: unknown, schema: TSchema | undefined): PreparedBody => {
  let problem: GatewayError | undefined;
  const report = (field: string, why: string) => {
    problem ??= connectError('invalid_argument', `invalid field '${field}': ${why}`, field);
  };
  const walk = (value: unknown, sch: TSchema | undefined, path: string, depth: number): unknown => {
    if (depth > MAX_DEPTH) {
      report(path || 'body', 'nested too deeply');
      return value;
    }
    if (typeof value === 'string') {
      const bad = unstorable(value);
      if (bad) report(path || 'body', bad);
      const s = sch as SchemaLike | undefined;
      const i64 = s?.int64 ? s : (s?.anyOf?.find((b) => (b as SchemaLike).int64) as SchemaLike | undefined);
      if (i64 && /^-?[0-9]+$/.test(value)) {
        const int = i64.anyOf?.find((b) => (b as SchemaLike).type === 'integer') as SchemaLike | undefined;
        if (int && (int.minimum !== undefined || int.maximum !== undefined)) return Number(value);
      }
      return value;
    }
    if (value === null || typeof value !== 'object') return value;
    const s = (sch ?? {}) as SchemaLike;
    if (Array.isArray(value)) return value.map((v, i) => walk(v, s.items, pathOf(path, i), depth + 1));
    const objectSchema = s.anyOf
      ? (s.anyOf.find((b) => (b as SchemaLike).properties || (b as SchemaLike).patternProperties) as SchemaLike | undefined)
      : s;
    const props = objectSchema?.properties;
    const mapValue = objectSchema?.patternProperties ? Object.values(objectSchema.patternProperties)[0] : undefined;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const badKey = unstorable(k);
      if (badKey) report(path || 'body', `a property name ${badKey}`);
      const name = !props || Object.hasOwn(props, k) ? k : Object.hasOwn(props, camel(k)) ? camel(k) : k;
      if (Object.hasOwn(out, name)) report(pathOf(path, name), `given twice (as '${k}' and its other spelling)`);
      const sub = props && Object.hasOwn(props, name) ? props[name] : mapValue;
      // An own property even for `__proto__`: it must reach the validator (and be rejected), never become a prototype.
      Object.defineProperty(out, name, {
        value: walk(v, sub, pathOf(path, name), depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  const value = walk(body, schema, '', 0);
  return { value, problem };
};

interface ValueErrorLike {
  path?: string;
  message?: string;
  schema?: SchemaLike;
  value?: unknown;
}

const fieldOf = (pointer: string | undefined): string =>
  (pointer ?? '')
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.') || 'body';

const jsonType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/**
 * A failed union: name the allowed values, or explain the branch that matches the value's type
 * (for an object branch, the nested field at fault). Returns the path below the union and a message.
 */
const unionError = (schema: SchemaLike, value: unknown): { sub: string; message: string } => {
  const branches = (schema.anyOf ?? []) as SchemaLike[];
  if (branches.length > 0 && branches.every((b) => b.const !== undefined))
    return { sub: '', message: `must be one of ${branches.map((b) => `'${String(b.const)}'`).join(', ')}` };
  const vt = jsonType(value);
  if (schema.int64) {
    const int = branches.find((b) => b.type === 'integer');
    const range = int && (int.minimum !== undefined || int.maximum !== undefined) ? ` in ${int.minimum ?? '…'}..${int.maximum ?? '…'}` : '';
    return { sub: '', message: `expected an integer${range} (a number or a string of digits)` };
  }
  const match =
    branches.find((b) => b.type === vt || (b.type === 'number' && vt === 'integer')) ??
    branches.find((b) => b.anyOf !== undefined) ??
    branches.find((b) => b.type !== 'null');
  if (!match) return { sub: '', message: 'invalid value' };
  if (match.anyOf) return unionError(match, value);
  const first = Value.Errors(match as TSchema, value).First() as ValueErrorLike | undefined;
  if (!first) return { sub: '', message: `expected ${branches.map((b) => b.type ?? 'value').join(' or ')}` };
  const sub = fieldOf(first.path);
  if (first.schema?.anyOf) {
    const inner = unionError(first.schema, first.value);
    return { sub: [sub === 'body' ? '' : sub, inner.sub].filter(Boolean).join('.'), message: inner.message };
  }
  return {
    sub: sub === 'body' ? '' : sub,
    message: /^Unexpected property/i.test(first.message ?? '') ? 'unknown property' : (first.message ?? 'invalid value'),
  };
};

/** Elysia's validation error → `invalid_argument` naming the field. */
export const validationMessage = (err: unknown): { field: string; message: string } => {
  const e = err as { valueError?: ValueErrorLike; all?: ValueErrorLike[] };
  const first = e.valueError ?? e.all?.[0];
  let field = fieldOf(first?.path);
  let msg = first?.message ?? 'invalid value';
  if (/^Unexpected property/i.test(msg)) {
    const parent = field.includes('.') ? field.slice(0, field.lastIndexOf('.')) : '';
    const shown = field.length > 80 ? `${field.slice(0, 80)}…` : field;
    return /(^|\.)(labels|context)$/.test(parent)
      ? { field, message: `invalid field '${shown}': a map key must be 1-255 characters` }
      : { field, message: `invalid field '${shown}': unknown property` };
  }
  if (first?.schema?.anyOf) {
    const u = unionError(first.schema, first.value);
    if (u.sub) field = field === 'body' ? u.sub : `${field}.${u.sub}`;
    msg = u.message;
  }
  if (/^Expected required property/i.test(msg)) msg = 'required';
  return { field, message: `invalid field '${field}': ${msg}` };
};
