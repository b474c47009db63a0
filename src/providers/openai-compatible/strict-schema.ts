/**
 * A JSON schema made fit for OpenAI's strict structured output (`strict: true`), or refused.
 *
 * Strict mode takes a subset of JSON Schema: every object closed (`additionalProperties: false`)
 * with every property required, and no keyword outside the supported list. What is done:
 * - an object without `additionalProperties` gets `additionalProperties: false` (the same meaning
 *   on Anthropic, whose structured output closes every object too);
 * - anything else strict mode cannot take is refused with a 400 naming the keyword's place in the
 *   client's schema: an object that allows other properties, a property left out of `required`
 *   (making it required would change the answer; make it nullable instead), an unsupported keyword
 *   or string `format`, a root that is not an object.
 */
import type { JsonObject, JsonValue } from '../../canonical/types.ts';
import { invalidRequest } from '../../core/errors.ts';

/** Keywords OpenAI's strict mode refuses (its "supported schemas" page). */
const UNSUPPORTED = new Set([
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'patternProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'prefixItems',
]);

/** String formats strict mode supports. */
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

/** Members whose value is one subschema / a map of subschemas / a list of subschemas. */
const ONE = ['items', 'additionalProperties'];
const MAP = ['properties', '$defs', 'definitions'];
const LIST = ['anyOf'];

const isObject = (v: JsonValue | undefined): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

const refuse = (path: string, why: string): never => {
  throw invalidRequest(`The JSON schema cannot be sent with OpenAI's strict structured output: ${why} (at '${path}').`, path);
};

const isObjectSchema = (s: JsonObject): boolean =>
  s['type'] === 'object' || (Array.isArray(s['type']) && s['type'].includes('object')) || isObject(s['properties']);

const strictNode = (s: JsonObject, path: string): JsonObject => {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s)) {
    if (UNSUPPORTED.has(k)) refuse(`${path}.${k}`, `'${k}' is not supported in strict mode`);
    if (k === 'format' && typeof v === 'string' && !FORMATS.has(v))
      refuse(`${path}.format`, `format '${v}' is not supported in strict mode`);
    if (ONE.includes(k) && isObject(v)) out[k] = strictNode(v, `${path}.${k}`);
    else if (MAP.includes(k) && isObject(v))
      out[k] = Object.fromEntries(
        Object.entries(v).map(([name, sub]) => [name, isObject(sub) ? strictNode(sub, `${path}.${k}.${name}`) : sub]),
      );
    else if (LIST.includes(k) && Array.isArray(v)) out[k] = v.map((sub, i) => (isObject(sub) ? strictNode(sub, `${path}.${k}.${i}`) : sub));
    else out[k] = v;
  }
  if (!isObjectSchema(s)) return out;
  const extra = out['additionalProperties'];
  if (extra === undefined) out['additionalProperties'] = false;
  else if (extra !== false) refuse(`${path}.additionalProperties`, 'every object must have additionalProperties: false');
  const props = isObject(out['properties']) ? Object.keys(out['properties']) : [];
  const required = Array.isArray(out['required']) ? out['required'] : [];
  const missing = props.filter((p) => !required.includes(p));
  if (missing.length > 0)
    refuse(`${path}.required`, `every property must be required (missing: ${missing.join(', ')}); make optional ones nullable instead`);
  return out;
};

/** The schema for `response_format.json_schema.schema` with `strict: true`; `param` is where the client put it. */
export const strictSchema = (schema: JsonObject, param: string): JsonObject => {
  if (!isObjectSchema(schema)) refuse(param, "the root must be an object schema ('type': 'object')");
  return strictNode(schema, param);
};
