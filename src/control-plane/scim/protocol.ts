import { type ErrorKind, GatewayError } from '../../core/errors.ts';

/**
 * SCIM 2.0 wire (RFC 7643/7644): schema URNs, the error body, list responses, the one filter form
 * identity providers send (`attribute eq "value"`), and paging (`startIndex` 1-based, `count`).
 */

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const CONTENT_TYPE = 'application/scim+json';

/** Largest page (`count`) answered; the default when the provider names none. */
export const MAX_COUNT = 200;
export const DEFAULT_COUNT = 100;

const KIND: Record<number, ErrorKind> = {
  400: 'invalid_request',
  401: 'authentication',
  403: 'permission',
  404: 'not_found',
  409: 'conflict',
};

/** A SCIM error (RFC 7644 §3.12): the gateway's one error type, with the `scimType` in its details. */
export const scimError = (status: 400 | 401 | 403 | 404 | 409 | 413 | 501, detail: string, scimType?: string): GatewayError =>
  new GatewayError({ kind: KIND[status] ?? 'invalid_request', status, message: detail, ...(scimType ? { details: { scimType } } : {}) });

export const scimJson = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(status === 204 ? null : JSON.stringify(body), { status, headers: { 'content-type': CONTENT_TYPE, ...headers } });

export const errorBody = (e: GatewayError): Response => {
  const scimType = e.details?.scimType;
  return scimJson(e.status, {
    schemas: [ERROR_SCHEMA],
    status: String(e.status),
    ...(typeof scimType === 'string' ? { scimType } : {}),
    detail: e.message,
  });
};

export const listBody = (resources: unknown[], total: number, startIndex: number): Record<string, unknown> => ({
  schemas: [LIST_SCHEMA],
  totalResults: total,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});

/** `attr eq "value"` (attribute names case-insensitive, RFC 7644 §3.4.2.2); any other filter is `invalidFilter`. */
export const parseFilter = (filter: string | null, attributes: readonly string[]): { attribute: string; value: string } | undefined => {
  if (filter === null || filter.trim() === '') return undefined;
  const m = /^\s*([A-Za-z][\w.:-]*)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
  const attribute = attributes.find((a) => a.toLowerCase() === m?.[1]?.toLowerCase());
  if (!m || !attribute)
    throw scimError(400, `unsupported filter: only ${attributes.map((a) => `${a} eq "…"`).join(', ')} are supported`, 'invalidFilter');
  return { attribute, value: (m[2] ?? '').replace(/\\(.)/g, '$1') };
};

export const pagingOf = (url: URL): { startIndex: number; count: number } => {
  const num = (name: string, fallback: number): number => {
    const raw = url.searchParams.get(name);
    if (raw === null || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n)) throw scimError(400, `'${name}' must be an integer`, 'invalidValue');
    return n;
  };
  return { startIndex: Math.max(1, num('startIndex', 1)), count: Math.min(MAX_COUNT, Math.max(0, num('count', DEFAULT_COUNT))) };
};

/** Booleans as Entra ID sends them too ("True"/"False"). */
export const boolOf = (v: unknown, field: string): boolean => {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw scimError(400, `'${field}' must be a boolean`, 'invalidValue');
};

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The PATCH operations (RFC 7644 §3.5.2), op names case-insensitive (Entra ID sends "Replace", "Add", "Remove"). */
export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path?: string;
  value?: unknown;
}

export const patchOperations = (body: unknown): PatchOperation[] => {
  if (!isObject(body) || !Array.isArray(body.schemas) || !body.schemas.includes(PATCH_SCHEMA))
    throw scimError(400, `a PATCH body has schemas ["${PATCH_SCHEMA}"]`, 'invalidSyntax');
  const ops = body.Operations ?? body.operations;
  if (!Array.isArray(ops) || ops.length === 0) throw scimError(400, "a PATCH body has a non-empty 'Operations' list", 'invalidSyntax');
  return ops.map((o, i) => {
    if (!isObject(o) || typeof o.op !== 'string') throw scimError(400, `Operations[${i}] has no 'op'`, 'invalidSyntax');
    const op = o.op.toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw scimError(400, `Operations[${i}]: unknown op '${o.op}'`, 'invalidSyntax');
    if (o.path !== undefined && typeof o.path !== 'string')
      throw scimError(400, `Operations[${i}]: 'path' must be a string`, 'invalidPath');
    return { op, ...(typeof o.path === 'string' ? { path: o.path } : {}), ...('value' in o ? { value: o.value } : {}) };
  });
};
