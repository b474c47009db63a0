import { type TObject, type TSchema, TypeGuard } from '@sinclair/typebox';
import type { Json, JsonObject } from '../../api/client.ts';

/**
 * Form fields from an operation's TypeBox input schema: each property becomes a field with the
 * API's bounds (length, pattern, range, choices, required) as HTML constraints, labelled with the
 * field's name in words. Values are kept as the strings the inputs hold and turned into the
 * request body by `bodyOf`.
 */

export type FieldKind = 'text' | 'secret' | 'number' | 'boolean' | 'choice' | 'list' | 'json' | 'group' | 'rows';

export interface Field {
  /** The API's field name; `path` is its dotted place in the body (`enterpriseContext.projectId`). */
  name: string;
  path: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  minLength?: number;
  maxLength?: number;
  /** Set only when the browser can compile it (HTML patterns use the `v` flag). */
  pattern?: string;
  minimum?: number;
  maximum?: number;
  choices?: string[];
  /** `group`: the nested object's fields; `rows`: one row's fields (a list of objects). */
  fields?: Field[];
  minItems?: number;
  maxItems?: number;
}

const WORDS: Record<string, string> = {
  id: 'ID',
  ids: 'IDs',
  url: 'URL',
  api: 'API',
  usd: 'USD',
  ms: 'ms',
  mcp: 'MCP',
  pii: 'PII',
  jti: 'JTI',
  ttl: 'TTL',
};

/** `customerId` → "Customer ID", `limitUsd` → "Limit USD", `baseUrl` → "Base URL". */
export const labelOf = (name: string): string => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .split(' ')
    .filter(Boolean)
    .map((w) => WORDS[w] ?? w);
  const first = words[0] ?? name;
  return [first === first.toLowerCase() ? first.charAt(0).toUpperCase() + first.slice(1) : first, ...words.slice(1)].join(' ');
};

const SECRET = /^(apiKey|secret|password|clientSecret|token|privateKey)$/;

/**
 * Inside character classes the `v` flag reserves `( ) [ { } / | -` as syntax: a literal one is
 * escaped (`[a-z0-9-]` → `[a-z0-9\\-]`); a `-` between two characters stays a range.
 */
const forVFlag = (p: string): string => {
  let out = '';
  let inClass = false;
  let rangeStart = false;
  for (let i = 0; i < p.length; i++) {
    const c = p.charAt(i);
    if (c === '\\') {
      out += c + p.charAt(i + 1);
      i++;
      rangeStart = inClass;
    } else if (!inClass) {
      out += c;
      if (c === '[') {
        inClass = true;
        rangeStart = false;
        if (p.charAt(i + 1) === '^') {
          out += '^';
          i++;
        }
      }
    } else if (c === ']') {
      out += c;
      inClass = false;
    } else if (c === '-' && rangeStart && i + 1 < p.length && p.charAt(i + 1) !== ']') {
      out += c;
      rangeStart = false;
      const end = p.charAt(i + 1);
      out += end === '\\' ? end + p.charAt(i + 2) : end;
      i += end === '\\' ? 2 : 1;
    } else if ('()[{}/|-'.includes(c)) {
      out += `\\${c}`;
      rangeStart = false;
    } else {
      out += c;
      rangeStart = true;
    }
  }
  return out;
};

/**
 * A JSON Schema pattern (matched anywhere in the value) as an HTML `pattern` (which must match the
 * whole value, compiled with the `v` flag); undefined when the browser could not compile it.
 */
export const htmlPattern = (pattern: string): string | undefined => {
  const whole = `[\\s\\S]*(?:${forVFlag(pattern)})[\\s\\S]*`;
  try {
    new RegExp(`^(?:${whole})$`, 'v');
    return whole;
  } catch {
    return undefined;
  }
};

/** A nullable or single-branch union stands for its branch; `Int64` (integer | digit string) for the integer. */
const unwrap = (s: TSchema): TSchema => {
  if (!TypeGuard.IsUnion(s)) return s;
  const branches = s.anyOf.filter((b) => !TypeGuard.IsNull(b));
  const integer = branches.find((b) => TypeGuard.IsInteger(b));
  if (integer && branches.every((b) => TypeGuard.IsInteger(b) || TypeGuard.IsString(b))) return integer;
  const only = branches[0];
  return branches.length === 1 && only ? unwrap(only) : { ...s, anyOf: branches };
};

const literals = (s: TSchema): string[] | undefined => {
  if (TypeGuard.IsLiteralString(s)) return [s.const];
  if (!TypeGuard.IsUnion(s)) return undefined;
  const values = s.anyOf.map((b) => (TypeGuard.IsLiteralString(b) ? b.const : undefined));
  return values.every((v): v is string => v !== undefined) ? values : undefined;
};

const fieldOf = (name: string, path: string, raw: TSchema, required: boolean): Field => {
  const s = unwrap(raw);
  const description = typeof raw.description === 'string' ? raw.description : typeof s.description === 'string' ? s.description : undefined;
  const base = { name, path, label: labelOf(name), required, ...(description ? { description } : {}) };
  const choices = literals(s);
  if (choices) return { ...base, kind: 'choice', choices };
  if (TypeGuard.IsString(s)) {
    const pattern = typeof s.pattern === 'string' ? htmlPattern(s.pattern) : undefined;
    return {
      ...base,
      kind: SECRET.test(name) ? 'secret' : 'text',
      ...(s.minLength !== undefined ? { minLength: s.minLength } : {}),
      ...(s.maxLength !== undefined ? { maxLength: s.maxLength } : {}),
      ...(pattern ? { pattern } : {}),
    };
  }
  if (TypeGuard.IsInteger(s) || TypeGuard.IsNumber(s))
    return {
      ...base,
      kind: 'number',
      ...(s.minimum !== undefined ? { minimum: s.minimum } : {}),
      ...(s.maximum !== undefined ? { maximum: s.maximum } : {}),
    };
  if (TypeGuard.IsBoolean(s)) return { ...base, kind: 'boolean' };
  if (TypeGuard.IsArray(s)) {
    const bounds = {
      ...(s.minItems !== undefined ? { minItems: s.minItems } : {}),
      ...(s.maxItems !== undefined ? { maxItems: s.maxItems } : {}),
    };
    if (TypeGuard.IsObject(s.items)) return { ...base, kind: 'rows', fields: fieldsOf(s.items, `${path}.`), ...bounds };
    const itemChoices = literals(s.items);
    return { ...base, kind: 'list', ...bounds, ...(itemChoices ? { choices: itemChoices } : {}) };
  }
  if (TypeGuard.IsObject(s)) return { ...base, kind: 'group', fields: fieldsOf(s, `${path}.`) };
  return { ...base, kind: 'json' };
};

/** The fields of an object schema, in declaration order. */
export const fieldsOf = (schema: TObject, prefix = ''): Field[] =>
  Object.entries(schema.properties).map(([name, s]) => fieldOf(name, `${prefix}${name}`, s, (schema.required ?? []).includes(name)));

/** What the inputs hold: dotted path → text (checkboxes: 'true' / ''; lists: one item a line; rows: `path.N.field`). */
export type Values = Record<string, string>;

const fieldValue = (f: Field, values: Values, rows: Record<string, number>): Json | undefined => {
  const text = values[f.path] ?? '';
  switch (f.kind) {
    case 'group': {
      const obj = objectOf(f.fields ?? [], values, rows);
      return Object.keys(obj).length > 0 || f.required ? obj : undefined;
    }
    case 'rows': {
      const out: Json[] = [];
      for (let i = 0; i < (rows[f.path] ?? 0); i++) {
        const row = objectOf(
          (f.fields ?? []).map((c) => ({ ...c, path: `${f.path}.${i}.${c.name}` })),
          values,
          rows,
        );
        if (Object.keys(row).length > 0) out.push(row);
      }
      return out.length > 0 || f.required ? out : undefined;
    }
    case 'boolean':
      return text === '' ? undefined : text === 'true';
    case 'number':
      return text.trim() === '' ? undefined : Number(text);
    case 'list': {
      const items = text
        .split(/\n|,/)
        .map((x) => x.trim())
        .filter(Boolean);
      return items.length > 0 ? items : undefined;
    }
    case 'json':
      if (text.trim() === '') return undefined;
      try {
        return JSON.parse(text) as Json;
      } catch {
        // Sent as written: the API names the field and says why.
        return text;
      }
    default:
      return text === '' && !f.required ? undefined : text;
  }
};

const objectOf = (fields: Field[], values: Values, rows: Record<string, number>): JsonObject => {
  const out: JsonObject = {};
  for (const f of fields) {
    const v = fieldValue(f, values, rows);
    if (v !== undefined) out[f.name] = v;
  }
  return out;
};

/** The request body the values describe: empty optional fields are left out. */
export const bodyOf = (fields: Field[], values: Values, rows: Record<string, number> = {}): JsonObject => objectOf(fields, values, rows);

/** The field an API error names (`invalid field 'targets.0.model': …`), or undefined. */
export const fieldOfError = (message: string): string | undefined => /invalid field '([^']+)'/.exec(message)?.[1];

/** The API's message without the client's `Operation: code:` prefix. */
export const messageOfError = (message: string): string => message.replace(/^[A-Za-z]+: [a-z_]+: /, '');

const scalarText = (v: Json | undefined): string | undefined =>
  v === undefined || v === null
    ? undefined
    : typeof v === 'string'
      ? v
      : typeof v === 'number' || typeof v === 'boolean'
        ? String(v)
        : undefined;

/**
 * What an edit form starts with: a resource as the API returned it, as the inputs' strings (the
 * inverse of `bodyOf`). Secrets are write-only and start empty (empty leaves them unchanged).
 */
export const valuesOf = (fields: Field[], row: JsonObject): { values: Values; rows: Record<string, number> } => {
  const values: Values = {};
  const rows: Record<string, number> = {};
  const walk = (fs: Field[], obj: JsonObject) => {
    for (const f of fs) {
      const v = obj[f.name];
      if (v === undefined || v === null || f.kind === 'secret') continue;
      if (f.kind === 'group' && typeof v === 'object' && !Array.isArray(v)) walk(f.fields ?? [], v);
      else if (f.kind === 'rows' && Array.isArray(v)) {
        rows[f.path] = v.length;
        v.forEach((item, i) => {
          if (item === null || typeof item !== 'object' || Array.isArray(item)) return;
          for (const c of f.fields ?? []) {
            const x = item[c.name];
            const t = c.kind === 'list' && Array.isArray(x) ? x.flatMap((y) => scalarText(y) ?? []).join('\n') : scalarText(x);
            if (t !== undefined) values[`${f.path}.${i}.${c.name}`] = t;
          }
        });
      } else if (f.kind === 'list' && Array.isArray(v)) values[f.path] = v.flatMap((x) => scalarText(x) ?? []).join('\n');
      else if (f.kind === 'json') values[f.path] = JSON.stringify(v);
      else {
        const t = scalarText(v);
        if (t !== undefined) values[f.path] = t;
      }
    }
  };
  walk(fields, row);
  return { values, rows };
};
