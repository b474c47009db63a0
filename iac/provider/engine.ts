import { Value } from '@sinclair/typebox/value';
import type { GatewayClient, JsonObject } from './client.ts';
import { createBody, type ResourceDef, stateFrom, updateBody } from './resource.ts';
import { type Attr, violations } from './schema.ts';
import { type Cty, type CtyObject, isUnknown, UNKNOWN } from './wire.ts';

/**
 * Terraform semantics over a ResourceDef: validation, planning (what changes in place, what
 * forces a replacement, what is unknown until apply), apply and read.
 */

export type PathStep = { attribute_name: string } | { element_key_int: number };
export interface Diagnostic {
  severity: number;
  summary: string;
  detail: string;
  attribute?: { steps: PathStep[] };
}

export const ERROR = 1;
export const WARNING = 2;
export const diag = (summary: string, detail = '', steps?: PathStep[]): Diagnostic => ({
  severity: ERROR,
  summary,
  detail,
  ...(steps ? { attribute: { steps } } : {}),
});

const asObject = (v: Cty | undefined): CtyObject | null => (v && typeof v === 'object' && !Array.isArray(v) && !isUnknown(v) ? v : null);
const same = (x: Cty | undefined, y: Cty | undefined): boolean => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);

export const validateConfig = (
  def: ResourceDef | { attrs: Attr[]; blocks?: ResourceDef['blocks']; check?: ResourceDef['check'] },
  config: CtyObject,
): Diagnostic[] => {
  const out: Diagnostic[] = [];
  for (const a of def.attrs)
    for (const m of violations(a, config[a.tf] ?? null)) out.push(diag(`Invalid value for ${a.tf}`, m, [{ attribute_name: a.tf }]));
  for (const b of def.blocks ?? []) {
    const list = config[b.tf];
    if (!Array.isArray(list)) continue;
    list.forEach((el, i) => {
      const o = asObject(el);
      if (!o) return;
      for (const a of b.attrs)
        for (const m of violations(a, o[a.tf] ?? null))
          out.push(
            diag(`Invalid value for ${b.tf}[${i}].${a.tf}`, m, [
              { attribute_name: b.tf },
              { element_key_int: i },
              { attribute_name: a.tf },
            ]),
          );
    });
  }
  for (const [attr, m] of def.check?.(config) ?? []) out.push(diag(`Invalid value for ${attr}`, m, [{ attribute_name: attr }]));
  return out;
};

/** Clearing this optional argument cannot be expressed by an update (its schema rejects ''). */
const clearNeedsReplace = (a: Attr): boolean => !a.schema || a.kind !== 'string' || !Value.Check(a.schema, '');

export interface Plan {
  planned: CtyObject | null;
  requiresReplace: PathStep[][];
  /**
   * After an import, the `*_wo_version` values adopted from the configuration without a diff (the
   * plan is the prior state: Terraform tolerates it as a legacy-type-system plan); a warning says so.
   */
  adopted?: { attr: string; value: Cty }[];
}

/** The private state an import leaves until the first apply (ImportResourceState → Plan → Apply). */
export const IMPORTED = 'imported';

/**
 * After an import, an attribute the API does not return (kept as given, or the provider's own
 * bookkeeping such as `*_wo_version`) reads as null, and one it returns may be left unset in the
 * configuration (a secret given write-only instead). Either way the configuration's value is
 * adopted: recorded in state at the next apply, without an API call and never a replacement.
 * Two different known values are a real change.
 */
const adoption = (a: Attr, was: Cty, now: Cty): boolean =>
  (a.keep === true || a.local === true) && !a.writeOnly && (was === null || now === null);

/** The attributes whose planned value differs from the prior state. */
const changed = (def: ResourceDef, prior: CtyObject, planned: CtyObject): Attr[] =>
  def.attrs.filter((a) => !a.writeOnly && !same(prior[a.tf], planned[a.tf]));

/** Every change is an adoption after an import (no API call needed). */
export const adoptsOnly = (def: ResourceDef, prior: CtyObject, planned: CtyObject): boolean => {
  const diff = changed(def, prior, planned);
  return (
    diff.length > 0 &&
    diff.every((a) => adoption(a, prior[a.tf] ?? null, planned[a.tf] ?? null)) &&
    !(def.blocks ?? []).some((b) => !same(prior[b.tf], planned[b.tf]))
  );
};

export const plan = (def: ResourceDef, prior: CtyObject | null, proposed: CtyObject | null, imported = false): Plan => {
  if (!proposed) return { planned: null, requiresReplace: [] };
  const planned: CtyObject = { ...proposed };
  const replace: PathStep[][] = [];
  for (const a of def.attrs) {
    if (a.writeOnly) planned[a.tf] = null;
    else if (a.computed && (planned[a.tf] ?? null) === null) planned[a.tf] = prior ? (prior[a.tf] ?? null) : UNKNOWN;
  }
  for (const b of def.blocks ?? []) {
    const list = planned[b.tf];
    if (!Array.isArray(list)) continue;
    planned[b.tf] = list.map((el) => {
      const o = asObject(el);
      if (!o) return el;
      const copy: CtyObject = { ...o };
      for (const a of b.attrs) if (a.computed && (copy[a.tf] ?? null) === null) copy[a.tf] = UNKNOWN;
      return copy;
    });
  }
  if (prior && imported && adoptsOnly(def, prior, planned)) {
    const diff = changed(def, prior, planned);
    // Only write-only versions to adopt: nothing to record but bookkeeping, so nothing is planned.
    if (diff.every((a) => a.local === true && a.tf.endsWith('_wo_version')))
      return {
        planned: { ...prior, ...Object.fromEntries(def.attrs.filter((a) => a.writeOnly).map((a) => [a.tf, null])) },
        requiresReplace: [],
        adopted: diff.map((a) => ({ attr: a.tf, value: planned[a.tf] ?? null })),
      };
    return { planned, requiresReplace: [] };
  }
  if (prior) {
    for (const a of def.attrs) {
      if (a.writeOnly || (a.computed && !a.optional)) continue;
      const was = prior[a.tf] ?? null;
      const now = planned[a.tf] ?? null;
      if (same(was, now)) continue;
      if (a.forceNew || (now === null && was !== null && !a.computed && !a.local && clearNeedsReplace(a)))
        replace.push([{ attribute_name: a.tf }]);
    }
    for (const b of def.blocks ?? []) if (!b.updatable && !same(prior[b.tf], planned[b.tf])) replace.push([{ attribute_name: b.tf }]);
    if (replace.length > 0) for (const a of def.attrs) if (a.computed && !a.optional) planned[a.tf] = UNKNOWN;
    // Without a change nothing is unknown: the plan is the prior state (no spurious diff).
    if (
      replace.length === 0 &&
      !def.attrs.some((a) => !same(prior[a.tf], planned[a.tf])) &&
      !(def.blocks ?? []).some((b) => !same(prior[b.tf], planned[b.tf]))
    )
      return {
        planned: { ...prior, ...Object.fromEntries(def.attrs.filter((a) => a.writeOnly).map((a) => [a.tf, null])) },
        requiresReplace: [],
      };
    // An update: what the server recomputes on any change is known only after apply.
    for (const a of def.attrs) if (a.volatile) planned[a.tf] = UNKNOWN;
  }
  return { planned, requiresReplace: replace };
};

/** Keeps what the user planned where the server's answer is semantically the same (planned values must not change in apply). */
const settle = (def: ResourceDef, fresh: CtyObject, planned: CtyObject): CtyObject => {
  const out: CtyObject = { ...fresh };
  for (const a of def.attrs) {
    const p = planned[a.tf];
    if (p === undefined || isUnknown(p) || p === null) continue;
    const got = out[a.tf];
    if (
      a.kind === 'number' &&
      (typeof p === 'number' || typeof p === 'string') &&
      (typeof got === 'number' || typeof got === 'string') &&
      Number(got) === Number(p)
    )
      out[a.tf] = p;
  }
  return out;
};

export const apply = async (
  c: GatewayClient,
  def: ResourceDef,
  prior: CtyObject | null,
  planned: CtyObject | null,
  config: CtyObject,
  imported = false,
): Promise<CtyObject | null> => {
  if (!planned) {
    if (prior) await def.delete(c, prior);
    return null;
  }
  // After an import, recording what the API does not return needs no call.
  if (prior && imported && adoptsOnly(def, prior, planned)) return planned;
  let api: JsonObject;
  if (!prior) {
    const body = createBody(def, planned, config);
    def.amend?.(body, null, planned, config);
    api = await def.create(c, body, planned);
  } else {
    if (!def.update) throw new Error(`${def.type} cannot be updated in place`);
    const body = updateBody(def, prior, planned, def.importKeys);
    def.amend?.(body, prior, planned, config);
    api = await def.update(c, body, prior);
  }
  return settle(def, stateFrom(def, api, planned), planned);
};

export const read = async (c: GatewayClient, def: ResourceDef, state: CtyObject): Promise<CtyObject | null> => {
  const api = await def.read(c, state);
  return api ? stateFrom(def, api, state) : null;
};

export const importState = (def: ResourceDef, id: string): CtyObject | string => {
  const custom = def.parseImport?.(id);
  const parts = id.split('/');
  if (!custom && parts.length !== def.importKeys.length) return `import id of ${def.type} is ${def.importKeys.join('/')} (got '${id}')`;
  const state: CtyObject = {};
  for (const a of def.attrs) state[a.tf] = null;
  for (const b of def.blocks ?? []) state[b.tf] = [];
  if (custom) return { ...state, ...custom };
  def.importKeys.forEach((k, i) => {
    state[k] = parts[i] ?? '';
  });
  return state;
};
