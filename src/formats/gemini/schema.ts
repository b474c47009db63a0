/**
 * Gemini schemas → JSON Schema. `parametersJsonSchema` and `responseJsonSchema` are JSON Schema
 * already (taken as given); `parameters` and `responseSchema` are Gemini's OpenAPI subset, whose
 * types are upper case (`OBJECT`, `STRING`) and whose `nullable` is a flag: those are rewritten,
 * `propertyOrdering` (an ordering hint with no JSON Schema meaning) is left out.
 */
import type { JsonObject, JsonValue } from '../../canonical/types.ts';
import { toJsonValue, type UnknownRecord } from '../validate.ts';

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const NESTED_MAPS = new Set(['properties', '$defs', 'definitions']);
const NESTED_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);

const fromOpenApi = (schema: JsonObject): JsonObject => {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'propertyOrdering' || k === 'nullable') continue;
    if (k === 'type' && typeof v === 'string') out[k] = v.toLowerCase();
    else if (NESTED_MAPS.has(k) && isObject(v))
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, isObject(s) ? fromOpenApi(s) : s]));
    else if (NESTED_LISTS.has(k) && Array.isArray(v)) out[k] = v.map((s) => (isObject(s) ? fromOpenApi(s) : s));
    else if ((k === 'items' || k === 'additionalProperties' || k === 'not') && isObject(v)) out[k] = fromOpenApi(v);
    else out[k] = v;
  }
  if (schema['nullable'] === true && typeof out['type'] === 'string') out['type'] = [out['type'], 'null'];
  return out;
};

export const jsonSchemaOf = (schema: UnknownRecord, openApi: boolean): JsonObject => {
  const v = toJsonValue(schema);
  const json = isObject(v) ? v : {};
  return openApi ? fromOpenApi(json) : json;
};
