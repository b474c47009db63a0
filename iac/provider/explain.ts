import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { PATTERNS } from '../../src/api/kit.ts';

/**
 * A schema violation in words a Terraform user can act on: the attribute (its Terraform name and
 * path), what is allowed (the values of an enum, the bounds, what a pattern means) and, where it
 * is not a secret, what was given. Never TypeBox's "Expected union value".
 */

interface Shape {
  type?: string;
  anyOf?: TSchema[];
  const?: unknown;
  description?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  items?: TSchema;
  maxProperties?: number;
  patternProperties?: Record<string, TSchema>;
  properties?: Record<string, TSchema>;
  required?: string[];
  int64?: boolean;
}
const shape = (s: TSchema): Shape => s;

/** What the named patterns of the API allow, in words. */
const PATTERN_WORDS: Record<string, string> = {
  [PATTERNS.UUID]: 'a lowercase UUID',
  [PATTERNS.SLUG]: 'lowercase letters, digits and inner hyphens',
  [PATTERNS.ID]: 'letters, digits, -, _ and .',
  [PATTERNS.PROJ]: 'lowercase letters, digits and inner - _ .',
  [PATTERNS.SERVER]: 'letters, digits and inner . _ -',
  [PATTERNS.SCOPE]: 'lowercase letters and _',
  [PATTERNS.MODEL]: 'letters, digits and - _ . : / @ +',
  '^https?://': 'an http:// or https:// URL',
};

/** A plain boolean (Value.Check's type guard would narrow an unknown value to never). */
const valid = (s: TSchema, v: unknown): boolean => Value.Check(s, v);

/** Markdown code for text that may itself hold a backtick. */
const code = (s: string): string => (s.includes('`') ? `\`\` ${s} \`\`` : `\`${s}\``);

const quote = (v: unknown): string => JSON.stringify(v) ?? String(v);

/** The values of an enum (a union of string literals, null aside), or undefined. */
export const enumValues = (s: TSchema): string[] | undefined => {
  const alternatives = shape(s).anyOf;
  if (!alternatives) return undefined;
  const branches = alternatives.filter((b) => shape(b).type !== 'null');
  const consts = branches.map((b) => shape(b).const);
  return branches.length > 0 && consts.every((c): c is string => typeof c === 'string') ? consts : undefined;
};

const range = (min: number | undefined, max: number | undefined, unit: string): string =>
  min !== undefined && max !== undefined
    ? `${min} to ${max}${unit}`
    : max !== undefined
      ? `at most ${max}${unit}`
      : `at least ${min ?? 0}${unit}`;

/** Bounds of a schema in words (for documentation): "1 to 253 characters", "one of: a, b". */
export const boundsOf = (s: TSchema): string[] => {
  const values = enumValues(s);
  if (values) return [`one of: ${values.map(code).join(', ')}`];
  const u = shape(s);
  if (u.anyOf) {
    const inner = u.anyOf.filter((b) => shape(b).type !== 'null');
    return inner[0] ? boundsOf(inner[0]) : [];
  }
  const out: string[] = [];
  if (u.type === 'string') {
    if (u.minLength !== undefined || u.maxLength !== undefined) out.push(range(u.minLength, u.maxLength, ' characters'));
    if (u.pattern) out.push(PATTERN_WORDS[u.pattern] ? `${PATTERN_WORDS[u.pattern]} (${code(u.pattern)})` : `matches ${code(u.pattern)}`);
  }
  if ((u.type === 'integer' || u.type === 'number') && (u.minimum !== undefined || u.maximum !== undefined)) {
    const wide = (u.minimum ?? 0) <= -2_147_483_648 && (u.maximum ?? 0) >= 2_147_483_647;
    if (!wide) out.push(range(u.minimum, u.maximum, ''));
  }
  if (u.type === 'array') {
    if (u.minItems !== undefined || u.maxItems !== undefined) out.push(range(u.minItems, u.maxItems, ' items'));
    if (u.items) {
      const each = boundsOf(u.items);
      if (each.length > 0) out.push(`each ${each.join(', ')}`);
    }
  }
  if (u.type === 'object' && u.maxProperties !== undefined) out.push(`at most ${u.maxProperties} entries`);
  return out;
};

const typeOk = (u: Shape, v: unknown): boolean =>
  u.type === 'string'
    ? typeof v === 'string'
    : u.type === 'integer' || u.type === 'number'
      ? typeof v === 'number'
      : u.type === 'array'
        ? Array.isArray(v)
        : u.type === 'object'
          ? typeof v === 'object' && v !== null && !Array.isArray(v)
          : u.type === 'boolean'
            ? typeof v === 'boolean'
            : true;

/**
 * Every violation of `s` by `v`, each naming `name` (the attribute and its path). `secret`: the
 * value is never repeated.
 */
export const explain = (s: TSchema, v: unknown, name: string, secret = false): string[] => {
  if (valid(s, v)) return [];
  const u = shape(s);
  const values = enumValues(s);
  if (values) return [`${name} must be one of ${values.map(quote).join(', ')}${secret ? '' : ` (got ${quote(v)})`}`];
  if (u.anyOf) {
    const branches = u.anyOf.filter((b) => shape(b).type !== 'null');
    const numeric = u.int64 && typeof v === 'string' && /^-?[0-9]{1,19}$/.test(v) ? Number(v) : v;
    const branch = branches.find((b) => typeOk(shape(b), numeric)) ?? branches[0];
    return branch ? explain(branch, numeric, name, secret) : [`${name} is not allowed here`];
  }
  if (!typeOk(u, v))
    return [
      `${name} must be ${u.type === 'integer' ? 'a whole number' : `a ${u.type === 'object' ? 'map' : u.type === 'array' ? 'list' : u.type}`}`,
    ];
  const out: string[] = [];
  if (typeof v === 'string') {
    if ((u.minLength !== undefined && v.length < u.minLength) || (u.maxLength !== undefined && v.length > u.maxLength))
      out.push(`${name} must be ${range(u.minLength, u.maxLength, ' characters')} long (got ${v.length})`);
    else if (u.pattern && !new RegExp(u.pattern).test(v))
      out.push(
        `${name} must be ${PATTERN_WORDS[u.pattern] ?? `text matching ${u.pattern}`}${PATTERN_WORDS[u.pattern] ? ` (${u.pattern})` : ''}${secret ? '' : `, got ${quote(v)}`}`,
      );
  } else if (typeof v === 'number') {
    if (u.type === 'integer' && !Number.isInteger(v)) out.push(`${name} must be a whole number (got ${v})`);
    else if ((u.minimum !== undefined && v < u.minimum) || (u.maximum !== undefined && v > u.maximum))
      out.push(`${name} must be ${range(u.minimum, u.maximum, '')} (got ${v})`);
  } else if (Array.isArray(v)) {
    if ((u.minItems !== undefined && v.length < u.minItems) || (u.maxItems !== undefined && v.length > u.maxItems))
      out.push(`${name} must have ${range(u.minItems, u.maxItems, ' items')} (got ${v.length})`);
    if (u.uniqueItems && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) out.push(`${name} must not repeat a value`);
    const items = u.items;
    if (items) for (const [i, x] of v.entries()) out.push(...explain(items, x, `${name}[${i}]`, secret));
  } else if (v && typeof v === 'object') {
    const entries = Object.entries(v);
    if (u.maxProperties !== undefined && entries.length > u.maxProperties)
      out.push(`${name} must have at most ${u.maxProperties} entries (got ${entries.length})`);
    const valueSchema = Object.values(u.patternProperties ?? {})[0];
    if (valueSchema) for (const [k, x] of entries) out.push(...explain(valueSchema, x, `${name}[${quote(k)}]`, secret));
    for (const k of u.required ?? []) if (!(k in v)) out.push(`${name}.${k} is required`);
    for (const [k, ps] of Object.entries(u.properties ?? {}))
      if (k in v) out.push(...explain(ps, (v as Record<string, unknown>)[k], `${name}.${k}`, secret));
  }
  if (out.length > 0) return out;
  // Anything else (a format, an unexpected key): TypeBox's own words, with the attribute's path.
  for (const e of Value.Errors(s, v)) {
    out.push(`${name}${e.path ? e.path.replace(/\//g, '.') : ''}: ${e.message}`);
    if (out.length >= 3) break;
  }
  return out;
};
