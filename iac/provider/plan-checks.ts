import type { PlanRequest, TerraformDecl } from '../../src/api/resource.ts';
import { GatewayError } from '../../src/core/errors.ts';
import type { ResourceDef } from './resource.ts';
import { type Attr, toApi } from './schema.ts';
import { type CtyObject, isUnknown } from './wire.ts';

/**
 * The declaration's cross-field rules (TerraformDecl.check: the API handlers' own functions) run
 * at validate and plan over the request the configuration describes. The refusal lands on the
 * Terraform attribute, in its name: `invalid field 'limitUsd': …` reads `limit_usd: …`.
 */

/** Thrown when the rule reads a field whose value is not known yet: the check waits for plan. */
class Pending extends Error {}

const lastPart = (api: string): string => api.split('.').pop() ?? api;

/** The request as the configuration gives it; reading an unknown field throws Pending. */
const requestOf = (attrs: Attr[], config: CtyObject): PlanRequest => {
  const known: Record<string, unknown> = {};
  const unknown = new Set<string>();
  for (const a of attrs) {
    if (a.local || (a.computed && !a.optional && !a.required)) continue;
    const v = config[a.tf];
    if (v === undefined || v === null) continue;
    // The api path and its last part both name the field (enterpriseContext.scopes, scopes).
    const names = [a.api, lastPart(a.api)];
    if (isUnknown(v)) for (const n of names) unknown.add(n);
    else {
      const value = toApi(a, v);
      if (value !== undefined) for (const n of names) known[n] = value;
    }
  }
  return new Proxy(known, {
    get: (target, key) => {
      if (typeof key === 'string' && unknown.has(key)) throw new Pending();
      return typeof key === 'string' ? target[key] : undefined;
    },
  });
};

/** `fieldName` → `attribute_name` in a message: the field named by the error, and every camelCase field of the resource. */
const inTerraformWords = (message: string, attrs: Attr[], param: string, attr: string): string => {
  let out = message.replace(`invalid field '${param}'`, attr);
  for (const a of attrs) {
    const f = lastPart(a.api);
    if (/[A-Z]/.test(f) && f !== a.tf && !a.writeOnly) out = out.replace(new RegExp(`\\b${f}\\b`, 'g'), a.tf);
  }
  return out;
};

export const declCheck = (d: TerraformDecl, attrs: Attr[]): ResourceDef['check'] => {
  const rule = d.check;
  if (!rule) return undefined;
  return (config) => {
    try {
      rule(requestOf(attrs, config));
      return [];
    } catch (e) {
      if (e instanceof Pending) return [];
      if (!(e instanceof GatewayError)) throw e;
      const param = e.param ?? '';
      const candidates = attrs.filter((a) => lastPart(a.api) === param && !a.local);
      // The form the configuration uses (auth_value or auth_value_wo), else the plain one.
      const attr = candidates.find((a) => config[a.tf] != null) ?? candidates.find((a) => !a.writeOnly) ?? candidates[0];
      const tf = attr?.tf ?? param;
      return [[tf, inTerraformWords(e.message, attrs, param, tf)]];
    }
  };
};
