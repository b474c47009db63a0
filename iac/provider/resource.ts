import type { TSchema } from '@sinclair/typebox';
import { ApiError, type GatewayClient, isNotFound, type Json, type JsonObject } from './client.ts';
import { type ApiValue, type Attr, fromApi, toApi } from './schema.ts';
import { type Cty, type CtyObject, isUnknown } from './wire.ts';

/** A list of nested blocks (a route's `target` blocks), kept in the order given. */
export interface BlockDef {
  tf: string;
  api: string;
  attrs: Attr[];
  min: number;
  max: number;
  schema?: TSchema;
  updatable: boolean;
  description: string;
}

export interface ResourceDef {
  type: string;
  description: string;
  attrs: Attr[];
  blocks?: BlockDef[];
  /** Terraform attribute names of the import id's parts, joined by '/'. */
  importKeys: string[];
  /** Alternative import id forms (e.g. a bare UUID) mapped to a partial state. */
  parseImport?: (id: string) => CtyObject | undefined;
  create(c: GatewayClient, body: JsonObject, plan: CtyObject): Promise<JsonObject>;
  /** The object as the server holds it, or null when it is gone (deleted or soft-deleted). */
  read(c: GatewayClient, state: CtyObject): Promise<JsonObject | null>;
  update?(c: GatewayClient, body: JsonObject, prior: CtyObject): Promise<JsonObject>;
  delete(c: GatewayClient, state: CtyObject): Promise<void>;
  /** Adjusts a request body (create: prior null) with what the generic mapping cannot express. */
  amend?(body: JsonObject, prior: CtyObject | null, plan: CtyObject, config: CtyObject): void;
  /** Cross-attribute checks at validate time: [attribute, message]. */
  check?(config: CtyObject): [string, string][];
}

export interface DataSourceDef {
  type: string;
  description: string;
  attrs: Attr[];
  read(c: GatewayClient, config: CtyObject): Promise<CtyObject>;
}

const setPath = (o: JsonObject, path: string, v: Json): void => {
  const parts = path.split('.');
  let cur = o;
  for (const p of parts.slice(0, -1)) {
    const next = cur[p];
    if (next && typeof next === 'object' && !Array.isArray(next)) cur = next;
    else {
      const fresh: JsonObject = {};
      cur[p] = fresh;
      cur = fresh;
    }
  }
  cur[parts[parts.length - 1] ?? path] = v;
};

const getPath = (o: JsonObject, path: string): ApiValue | undefined => {
  let cur: Json | undefined = o;
  for (const p of path.split('.')) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = cur[p];
  }
  return cur as ApiValue | undefined;
};

const blockToApi = (b: BlockDef, v: Cty): Json => {
  if (!Array.isArray(v)) return [];
  return v.map((el) => {
    const o: JsonObject = {};
    if (el && typeof el === 'object' && !Array.isArray(el))
      for (const a of b.attrs) {
        const x = toApi(a, (el as CtyObject)[a.tf] ?? null);
        if (x !== undefined) o[a.api] = x as Json;
      }
    return o;
  });
};

/** The request body for a create: every known, non-null argument (write-only ones come from config). */
export const createBody = (def: ResourceDef, plan: CtyObject, config: CtyObject): JsonObject => {
  const body: JsonObject = {};
  for (const a of def.attrs) {
    if ((a.computed && !a.optional) || a.local) continue;
    const v = toApi(a, a.writeOnly ? (config[a.tf] ?? null) : (plan[a.tf] ?? null));
    if (v !== undefined) setPath(body, a.api, v as Json);
  }
  for (const b of def.blocks ?? []) setPath(body, b.api, blockToApi(b, plan[b.tf] ?? null));
  return body;
};

const same = (x: Cty | undefined, y: Cty | undefined): boolean => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);

/** The request body for an update: the keys plus every updatable argument that changed. */
export const updateBody = (def: ResourceDef, prior: CtyObject, plan: CtyObject, keys: string[]): JsonObject => {
  const body: JsonObject = {};
  for (const a of def.attrs) {
    if (keys.includes(a.tf)) {
      const v = toApi(a, prior[a.tf] ?? null);
      if (v !== undefined) setPath(body, a.api, v as Json);
      continue;
    }
    if (!a.updatable || a.writeOnly || a.local || same(prior[a.tf], plan[a.tf])) continue;
    const v = toApi(a, plan[a.tf] ?? null);
    // A cleared optional string is sent as '' (the API keeps a field that is null or absent).
    setPath(body, a.api, (v === undefined ? (a.kind === 'string' ? '' : null) : v) as Json);
  }
  for (const b of def.blocks ?? [])
    if (b.updatable && !same(prior[b.tf], plan[b.tf])) setPath(body, b.api, blockToApi(b, plan[b.tf] ?? null));
  return body;
};

/** State from the server's object: what the API returns wins; kept (secret, write-only) attributes stay as planned. */
export const stateFrom = (def: ResourceDef, api: JsonObject, base: CtyObject): CtyObject => {
  const out: CtyObject = {};
  for (const a of def.attrs) {
    const prior = base[a.tf] ?? null;
    if (a.writeOnly) out[a.tf] = null;
    else if (a.keep) {
      // Kept as given; with nothing given yet (an import) the API's value when it returns one.
      // Not while the secret is given write-only (its version set): the state never holds it then.
      const woInUse = (base[`${a.tf}_wo_version`] ?? null) !== null;
      const v = (prior === null || isUnknown(prior)) && !woInUse ? getPath(api, a.read ?? a.api.split('.').pop() ?? a.api) : undefined;
      out[a.tf] = v === undefined ? (isUnknown(prior) ? null : prior) : fromApi(a, v, null);
    } else {
      const v = getPath(api, a.read ?? a.api.split('.').pop() ?? a.api);
      // A field the answer does not carry keeps its known value (a list row may omit some).
      out[a.tf] = v === undefined ? (isUnknown(prior) ? null : prior) : fromApi(a, v, prior);
    }
  }
  for (const b of def.blocks ?? []) {
    const v = getPath(api, b.api);
    out[b.tf] = Array.isArray(v)
      ? v.map((el) => {
          const o: CtyObject = {};
          for (const a of b.attrs)
            o[a.tf] = fromApi(
              a,
              el && typeof el === 'object' && !Array.isArray(el) ? (el as Record<string, ApiValue>)[a.api] : undefined,
              null,
            );
          return o;
        })
      : [];
  }
  return out;
};

/** Reads through a get that answers not_found for a deleted (or soft-deleted) object. */
export const orGone = async (p: Promise<JsonObject>, envelope: string): Promise<JsonObject | null> => {
  try {
    const r = await p;
    const v = r[envelope];
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
};

export const envelopeOf = (r: JsonObject, envelope: string): JsonObject => {
  const v = r[envelope];
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ApiError('internal', `response has no '${envelope}'`, 200);
  return v;
};

/** Pages through a list operation until `match` finds the object. */
export const findInList = async (
  c: GatewayClient,
  op: string,
  body: JsonObject,
  listField: string,
  match: (o: JsonObject) => boolean,
  service?: string,
): Promise<JsonObject | null> => {
  let pageToken = '';
  for (let i = 0; i < 1000; i++) {
    let r: JsonObject;
    try {
      r = await c.callJson(op, { ...body, pageSize: 1000, ...(pageToken ? { pageToken } : {}) }, service);
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
    const items = r[listField];
    if (Array.isArray(items)) for (const it of items) if (it && typeof it === 'object' && !Array.isArray(it) && match(it)) return it;
    pageToken = typeof r.nextPageToken === 'string' ? r.nextPageToken : '';
    if (!pageToken) return null;
  }
  return null;
};

export const str = (v: Cty | undefined): string => (typeof v === 'string' ? v : '');
