/**
 * Small readers for decoding untrusted JSON request bodies with precise 400 errors. Every reader
 * takes the containing object, the key, and the dotted path of the container (`''` at the top
 * level), and reports the full dotted path (`messages.0.content`) as the error's `param`.
 * `null` counts as absent for optional fields (several SDKs send explicit nulls).
 */
import type { JsonObject, JsonValue } from '../canonical/types.ts';
import { type GatewayError, invalidRequest } from '../core/errors.ts';

import { isRecord, type UnknownRecord } from '../core/json.ts';

export { isRecord, type UnknownRecord };

/** `joinPath('messages.0', 'content')` → `messages.0.content`; `joinPath('', 'model')` → `model`. */
export const joinPath = (base: string, key: string | number): string => (base === '' ? String(key) : `${base}.${key}`);

const describe = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
};

export const missingParam = (path: string): GatewayError => invalidRequest(`Missing required parameter: '${path}'.`, path);

export const invalidType = (path: string, expected: string, got: unknown): GatewayError =>
  invalidRequest(`Invalid type for '${path}': expected ${expected}, but got ${describe(got)} instead.`, path);

export const invalidValue = (path: string, message: string): GatewayError =>
  invalidRequest(`Invalid value for '${path}': ${message}`, path);

/** The request body itself must be a JSON object. */
export const requireBody = (body: unknown): UnknownRecord => {
  if (!isRecord(body)) throw invalidRequest('Request body must be a JSON object', null);
  return body;
};

const present = (obj: UnknownRecord, key: string): boolean => obj[key] !== undefined && obj[key] !== null;

// ---- strings -----------------------------------------------------------------------------------

export const requireString = (obj: UnknownRecord, key: string, base = '', opts: { nonEmpty?: boolean } = {}): string => {
  const path = joinPath(base, key);
  if (!present(obj, key)) throw missingParam(path);
  const v = obj[key];
  if (typeof v !== 'string') throw invalidType(path, 'a string', v);
  if (opts.nonEmpty && v.length === 0) throw invalidValue(path, 'expected a non-empty string.');
  return v;
};

export const optionalString = (obj: UnknownRecord, key: string, base = ''): string | undefined => {
  if (!present(obj, key)) return undefined;
  const v = obj[key];
  if (typeof v !== 'string') throw invalidType(joinPath(base, key), 'a string', v);
  return v;
};

export const optionalEnum = <T extends string>(obj: UnknownRecord, key: string, values: readonly T[], base = ''): T | undefined => {
  const v = optionalString(obj, key, base);
  if (v === undefined) return undefined;
  const found = values.find((x) => x === v);
  if (found === undefined) {
    throw invalidValue(joinPath(base, key), `expected one of ${values.map((x) => `'${x}'`).join(', ')}, but got '${v}'.`);
  }
  return found;
};

/** A string or an array of strings (e.g. Chat `stop`), normalised to an array. */
export const optionalStringList = (obj: UnknownRecord, key: string, base = '', allowSingle = true): string[] | undefined => {
  if (!present(obj, key)) return undefined;
  const path = joinPath(base, key);
  const v = obj[key];
  if (typeof v === 'string' && allowSingle) return [v];
  if (!Array.isArray(v)) throw invalidType(path, allowSingle ? 'a string or an array of strings' : 'an array of strings', v);
  return v.map((item, i) => {
    if (typeof item !== 'string') throw invalidType(joinPath(path, i), 'a string', item);
    return item;
  });
};

/** An object whose values are all strings (`metadata`). */
export const optionalStringMap = (obj: UnknownRecord, key: string, base = ''): Record<string, string> | undefined => {
  const rec = optionalRecord(obj, key, base);
  if (rec === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rec)) {
    if (typeof v !== 'string') throw invalidType(joinPath(joinPath(base, key), k), 'a string', v);
    out[k] = v;
  }
  return out;
};

// ---- numbers and booleans ------------------------------------------------------------------------

export const optionalNumber = (obj: UnknownRecord, key: string, base = ''): number | undefined => {
  if (!present(obj, key)) return undefined;
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidType(joinPath(base, key), 'a number', v);
  return v;
};

export const optionalInteger = (obj: UnknownRecord, key: string, base = '', opts: { min?: number } = {}): number | undefined => {
  if (!present(obj, key)) return undefined;
  const path = joinPath(base, key);
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalidType(path, 'an integer', v);
  if (opts.min !== undefined && v < opts.min) throw invalidValue(path, `expected an integer >= ${opts.min}, but got ${v}.`);
  return v;
};

export const requireInteger = (obj: UnknownRecord, key: string, base = '', opts: { min?: number } = {}): number => {
  const v = optionalInteger(obj, key, base, opts);
  if (v === undefined) throw missingParam(joinPath(base, key));
  return v;
};

export const optionalBoolean = (obj: UnknownRecord, key: string, base = ''): boolean | undefined => {
  if (!present(obj, key)) return undefined;
  const v = obj[key];
  if (typeof v !== 'boolean') throw invalidType(joinPath(base, key), 'a boolean', v);
  return v;
};

// ---- containers ----------------------------------------------------------------------------------

export const requireArray = (obj: UnknownRecord, key: string, base = '', opts: { nonEmpty?: boolean } = {}): unknown[] => {
  const path = joinPath(base, key);
  if (!present(obj, key)) throw missingParam(path);
  const v = obj[key];
  if (!Array.isArray(v)) throw invalidType(path, 'an array', v);
  if (opts.nonEmpty && v.length === 0) throw invalidValue(path, 'expected a non-empty array.');
  return v;
};

export const optionalArray = (obj: UnknownRecord, key: string, base = ''): unknown[] | undefined => {
  if (!present(obj, key)) return undefined;
  const v = obj[key];
  if (!Array.isArray(v)) throw invalidType(joinPath(base, key), 'an array', v);
  return v;
};

export const optionalRecord = (obj: UnknownRecord, key: string, base = ''): UnknownRecord | undefined => {
  if (!present(obj, key)) return undefined;
  const v = obj[key];
  if (!isRecord(v)) throw invalidType(joinPath(base, key), 'an object', v);
  return v;
};

export const requireRecord = (obj: UnknownRecord, key: string, base = ''): UnknownRecord => {
  const v = optionalRecord(obj, key, base);
  if (v === undefined) throw missingParam(joinPath(base, key));
  return v;
};

/** An array element that must be an object. */
export const recordAt = (v: unknown, path: string): UnknownRecord => {
  if (!isRecord(v)) throw invalidType(path, 'an object', v);
  return v;
};

// ---- JSON passthrough ----------------------------------------------------------------------------

/** Converts parsed JSON into a JsonValue, dropping what JSON cannot hold (undefined, functions). */
export const toJsonValue = (v: unknown): JsonValue | undefined => {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map((x) => toJsonValue(x) ?? null);
  if (isRecord(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      const j = toJsonValue(x);
      if (j !== undefined) out[k] = j;
    }
    return out;
  }
  return undefined;
};

/** An optional JSON-object field (a tool's JSON Schema, say). */
export const optionalJsonObject = (obj: UnknownRecord, key: string, base = ''): JsonObject | undefined => {
  const rec = optionalRecord(obj, key, base);
  if (rec === undefined) return undefined;
  const j = toJsonValue(rec);
  return j !== null && typeof j === 'object' && !Array.isArray(j) ? j : {};
};

/** Returns a copy of `o` without its `undefined` properties (canonical objects stay lean). */
export { compact } from '../core/json.ts';

export { checkNesting, MAX_JSON_DEPTH } from '../core/json-depth.ts';
