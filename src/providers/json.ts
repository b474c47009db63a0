/**
 * Small type guards for reading upstream JSON and connection options without `any`.
 * Everything that comes off the wire is `unknown` until one of these has looked at it.
 */
import { compact as compactAny, isRecord, type UnknownRecord } from '../core/json.ts';
import type { JsonObject, JsonValue } from '../canonical/types.ts';

export { isRecord, type UnknownRecord };

export const asRecord = (v: unknown): UnknownRecord | undefined => (isRecord(v) ? v : undefined);

export const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export const asNumber = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export const asArray = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);

export type ParsedJson = { ok: true; value: unknown } | { ok: false };

export const parseJson = (text: string): ParsedJson => {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
};

export const isJsonValue = (v: unknown): v is JsonValue => {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJsonValue);
  if (isRecord(v)) return Object.values(v).every(isJsonValue);
  return false;
};

export const isJsonObject = (v: unknown): v is JsonObject => isRecord(v) && isJsonValue(v);

/** Drops `undefined` members so the result is plain JSON. */
export const compact = (o: Record<string, JsonValue | undefined>): JsonObject => compactAny(o) as JsonObject;

// ---- connection options ------------------------------------------------------------------------

export const optionString = (options: JsonObject, key: string): string | undefined => {
  const v = options[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

export const optionNumber = (options: JsonObject, key: string): number | undefined => asNumber(options[key]);

/** A list option given as an array of strings or a comma-separated string. */
export const optionStringList = (options: JsonObject, key: string): string[] => {
  const v = options[key];
  if (typeof v === 'string')
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string' && s !== '');
  return [];
};

/** `options.headers`: an object of string → string; other values are ignored. */
export const optionHeaders = (options: JsonObject): Record<string, string> => {
  const v = options['headers'];
  const out: Record<string, string> = {};
  if (!isRecord(v)) return out;
  for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val;
  return out;
};

/** Sets a header, replacing any existing header of the same name in another letter case. */
export const setHeader = (headers: Record<string, string>, name: string, value: string): void => {
  const lower = name.toLowerCase();
  for (const k of Object.keys(headers)) if (k.toLowerCase() === lower) delete headers[k];
  headers[name] = value;
};

export const trimTrailingSlash = (url: string): string => url.replace(/\/+$/, '');
