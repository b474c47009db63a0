import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { asGatewayError, connectError, GatewayError, toConnectBody } from '../core/errors.ts';
import { log } from '../core/log.ts';
import type { Principal } from './auth.ts';

/**
 * The Connect-protocol unary JSON wire: every operation is `POST /{service}/{Operation}` with the
 * request object as body and the response object as a 200 body; errors are
 * `{code, message}` with the Connect status mapping. One `t` schema per operation validates the
 * request, types the handler and documents the operation in OpenAPI.
 */

export type ServiceName = 'admin.v1.AdminService' | 'apikey.v1.ApiKeyService' | 'byok.v1.ByokService';

/** Who may call an operation. Project-scoped permissions need `scope` on the operation. */
export type Permission = 'platform_admin' | 'project_admin' | 'project_member' | 'authenticated';

export interface OpContext {
  principal: Principal;
  request: Request;
}

/** An operation as written: `input` and `handler` agree on one schema type. */
export interface TypedOp<S extends TObject> {
  service: ServiceName;
  name: string;
  summary: string;
  permission: Permission;
  input: S;
  /** The project an operation acts on, for project-scoped permissions. */
  scope?: (input: Static<S>) => { customerId: string; projectId: string } | undefined;
  handler: (input: Static<S>, ctx: OpContext) => Promise<object>;
}

/** An operation as mounted: its input type erased (validated against `input` before the call). */
export interface OpDef {
  service: ServiceName;
  name: string;
  summary: string;
  permission: Permission;
  input: TObject;
  scope?: (input: never) => { customerId: string; projectId: string } | undefined;
  handler: (input: never, ctx: OpContext) => Promise<object>;
}

/** Typed constructor: keeps `input` and `handler` in agreement. */
export const op = <S extends TObject>(def: TypedOp<S>): OpDef => def as unknown as OpDef;

const camel = (k: string): string => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

interface SchemaLike {
  type?: string;
  properties?: Record<string, TSchema>;
  items?: TSchema;
  anyOf?: TSchema[];
}

/**
 * Accepts snake_case property names by renaming them to the schema's camelCase names — only for
 * properties the schema declares (map keys such as labels are user data and stay as sent).
 */
export const normaliseNames = (value: unknown, schema: TSchema): unknown => {
  const s = schema as SchemaLike;
  if (Array.isArray(value) && s.items) return value.map((v) => normaliseNames(v, s.items as TSchema));
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  if (s.anyOf) {
    const objectBranch = s.anyOf.find((b) => (b as SchemaLike).properties);
    return objectBranch ? normaliseNames(value, objectBranch) : value;
  }
  const props = s.properties;
  if (!props) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const name = k in props ? k : camel(k) in props ? camel(k) : k;
    if (name in out) throw connectError('invalid_argument', `field '${name}' is given twice (as '${k}' and its other spelling)`, name);
    const sub = props[name];
    out[name] = sub ? normaliseNames(v, sub) : v;
  }
  return out;
};

const fieldOf = (path: string | undefined): string => (path ?? '').replace(/^\//, '').replace(/\//g, '.') || 'body';

interface ValueErrorLike {
  path?: string;
  message?: string;
  schema?: { description?: string };
  value?: unknown;
}

/** Elysia's validation error → `invalid_argument` naming the field. */
const validationMessage = (err: unknown): { field: string; message: string } => {
  const e = err as { valueError?: ValueErrorLike; all?: ValueErrorLike[] };
  const first = e.valueError ?? e.all?.[0];
  let field = fieldOf(first?.path);
  const msg = first?.message ?? 'invalid value';
  // An unknown property is reported at its parent's path; name the property itself.
  if (/^Unexpected property/i.test(msg) && first?.value && typeof first.value === 'object') {
    const known = (first as { schema?: { properties?: Record<string, unknown> } }).schema?.properties ?? {};
    const extra = Object.keys(first.value as Record<string, unknown>).find((k) => !(k in known));
    if (extra) field = field === 'body' ? extra : `${field}.${extra}`;
    return { field, message: `invalid field '${field}': unknown property` };
  }
  return { field, message: `invalid field '${field}': ${msg}` };
};

export interface MountOptions {
  authenticate: (request: Request) => Promise<Principal>;
  authorize: (principal: Principal, def: OpDef, input: unknown) => void;
}

const connectResponse = (e: GatewayError): Response =>
  new Response(JSON.stringify(toConnectBody(e)), { status: e.status, headers: { 'content-type': 'application/json' } });

/** Mounts operations on a new Elysia instance (strict: unknown properties are rejected). */
export const mountOperations = (ops: readonly OpDef[], opts: MountOptions) => {
  const principals = new WeakMap<Request, Principal>();
  let app = new Elysia({ normalize: false, name: 'connect-operations' }).onError(({ code, error }) => {
    if (code === 'VALIDATION') {
      const v = validationMessage(error);
      return connectResponse(connectError('invalid_argument', v.message, v.field));
    }
    if (code === 'PARSE') return connectResponse(connectError('invalid_argument', 'the request body is not valid JSON'));
    if (code === 'NOT_FOUND') return connectResponse(connectError('not_found', 'unknown operation'));
    if (error instanceof GatewayError) return connectResponse(error);
    log.error('management operation failed', { error: error instanceof Error ? error.message : String(error) });
    return connectResponse(asGatewayError(error));
  });
  for (const def of ops) {
    app = app.post(
      `/${def.service}/${def.name}`,
      async ({ body, request }) => {
        const principal = principals.get(request);
        if (!principal) throw connectError('unauthenticated', 'missing credentials');
        opts.authorize(principal, def, body);
        return def.handler(body as never, { principal, request });
      },
      {
        body: def.input,
        parse: 'json',
        // Runs before validation: an unauthenticated caller learns nothing about the schema.
        async transform(ctx) {
          principals.set(ctx.request, await opts.authenticate(ctx.request));
          if (ctx.body === undefined || ctx.body === null) ctx.body = {};
          ctx.body = normaliseNames(ctx.body, def.input) as typeof ctx.body;
        },
        detail: { summary: def.summary, tags: [def.service], description: `Requires: ${def.permission}.` },
      },
    ) as unknown as typeof app;
  }
  return app;
};
