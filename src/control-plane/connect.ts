import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { projectOrDefault } from '../api/kit.ts';
import type { OpSpec } from '../api/op.ts';
import { Elysia } from 'elysia';
import { asGatewayError, connectError, databaseUnavailable, GatewayError, isDatabaseUnavailable, toConnectBody } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';
import { type CallInfo, callInfo } from './audit-record.ts';
import { type PreparedBody, prepareBody, type SchemaLike, validationMessage } from './connect-body.ts';
import type { Principal } from './auth.ts';
import type { AuditSpec } from './mutation.ts';

/**
 * The Connect-protocol unary JSON wire: every operation is `POST /{service}/{Operation}` with the
 * request object as body and the response object as a 200 body; errors are
 * `{code, message}` with the Connect status mapping. One `t` schema per operation validates the
 * request, types the handler and documents the operation in OpenAPI; one more documents (and types)
 * its response. The body's preparation before validation, and validation errors as messages naming
 * the field, are in connect-body.ts.
 */

export type { Permission, ServiceName } from '../api/op.ts';
import { PERMISSION_TEXT } from '../api/op.ts';
export { PERMISSION_TEXT };

/**
 * The customer (and project) an operation acts on, for scoped permissions. A scope function runs
 * on the body as sent (authorization comes before validation), so what it returns is checked
 * (control-plane/auth.ts): anything but strings is a denial.
 */
export interface Scope {
  customerId: unknown;
  /** The customer's row id, when the scope function read the target row (see ManagementAuth.authorize). */
  customerUuid?: unknown;
  projectId?: unknown;
}

/** The body as sent, before validation: any property may be missing or of any JSON type. */
export type Unchecked<T> = { readonly [K in keyof T]?: unknown };

/** The scope a customer and project name as sent: the project is 'default' when absent, null or empty. */
export const projectScope = (customerId: unknown, projectId: unknown): Scope => ({
  customerId,
  projectId: projectId === undefined || projectId === null || typeof projectId === 'string' ? projectOrDefault(projectId) : projectId,
});

/** The scope of a body as sent: its `customerId`, and its `projectId` ('default' when empty). */
export const bodyScope = (i: Unchecked<{ customerId: string; projectId: string }>): Scope => projectScope(i.customerId, i.projectId);

/**
 * `bodyScope`, or none when the body names no customer (a resource addressed by id alone, or a
 * platform-wide query): then only the platform admin may call.
 */
export const namedScope = (i: Unchecked<{ customerId: string; projectId: string }>): Scope | undefined =>
  i.customerId === undefined || i.customerId === null || i.customerId === '' ? undefined : bodyScope(i);

export interface OpContext {
  principal: Principal;
  request: Request;
  /** The request's id, client address and agent (for audit entries). */
  call: CallInfo;
}

/** What the server adds to an operation's spec (src/api): who it acts on and what it does. */
export interface OpImpl<S extends TObject, O extends TObject> {
  /** The customer/project an operation acts on; called for user principals only, on the body as sent. */
  scope?: (input: Unchecked<Static<S>>) => Scope | undefined | Promise<Scope | undefined>;
  handler: (input: Static<S>, ctx: OpContext) => Promise<Static<O>>;
  /** See OpDef.sessionDefaults. */
  sessionDefaults?: (body: Record<string, unknown>, principal: Principal) => Record<string, unknown>;
}

/** An operation as mounted: its spec, and closures that check what they are given. */
export interface OpDef extends OpSpec {
  scope?: (input: Readonly<Record<string, unknown>>) => Scope | undefined | Promise<Scope | undefined>;
  handler: (input: unknown, ctx: OpContext) => Promise<object>;
  /** Set for state-changing operations (declared with `mutation`, see mutation.ts): audited. */
  audit?: AuditSpec;
  /**
   * Fills fields the caller left empty from its session (e.g. BYOK's customerId/projectId from the
   * user token's claims); runs after authentication, before authorization and validation.
   */
  sessionDefaults?: (body: Record<string, unknown>, principal: Principal) => Record<string, unknown>;
}

const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>();

/**
 * The input as its schema types it. Elysia validated it already before the handler runs; this
 * second (compiled, cached) check is what lets the handler's type follow from the schema without a
 * cast, and refuses anything that reached a handler some other way.
 */
export const checkedInput = <S extends TSchema>(schema: S, input: unknown): Static<S> => {
  let check = checkers.get(schema) as TypeCheck<S> | undefined;
  if (!check) {
    check = TypeCompiler.Compile(schema);
    checkers.set(schema, check);
  }
  if (check.Check(input)) return input;
  const first = check.Errors(input).First();
  const field = first ? first.path.split('/').filter(Boolean).join('.') || 'body' : 'body';
  throw connectError('invalid_argument', `invalid field '${field}': ${first?.message ?? 'invalid value'}`, field);
};

/** Binds a handler to an operation's spec (src/api/ops); the handler's input and output follow from it. */
export const op = <S extends TObject, O extends TObject>(spec: OpSpec<S, O>, impl: OpImpl<S, O>): OpDef => {
  const { scope, handler, sessionDefaults } = impl;
  return {
    ...spec,
    ...(scope ? { scope: (input: Readonly<Record<string, unknown>>) => scope(input) } : {}),
    handler: (input: unknown, ctx: OpContext) => handler(checkedInput(spec.input, input), ctx),
    ...(sessionDefaults ? { sessionDefaults } : {}),
  };
};

export interface MountOptions {
  authenticate: (request: Request) => Promise<Principal>;
  authorize: (principal: Principal, def: OpDef, input: unknown) => Promise<void>;
}

const connectResponse = (e: GatewayError, requestId?: string): Response =>
  new Response(JSON.stringify(toConnectBody(e)), {
    status: e.status,
    headers: { 'content-type': 'application/json', ...(requestId ? { 'x-request-id': requestId } : {}) },
  });

/** The part of Elysia's context the operations read (the server, for the peer address). */
interface ServerCtx {
  server?: { requestIP?: (request: Request) => { address: string } | null } | null;
}

/** What is known of a call when it fails: which operation, who, and the body as sent. */
interface CallState {
  def: OpDef;
  principal?: Principal;
  body?: unknown;
}

const ConnectErrorSchema = {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description: 'Connect code: invalid_argument, failed_precondition, unauthenticated, permission_denied, not_found, already_exists, …',
    },
    message: { type: 'string', description: 'what went wrong; names the offending field for invalid_argument' },
  },
  required: ['code', 'message'],
};

/** The OpenAPI description of an operation: summary, notes, required permission. */
export const describeOp = (def: OpDef): string =>
  [def.notes, `**Required permission:** \`${def.permission}\` (${PERMISSION_TEXT[def.permission]}).`].filter(Boolean).join('\n\n');

const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Gives every declared property its snake_case spelling as `title` (documentation; both are accepted). */
const addSnakeTitles = (schema: SchemaLike & { title?: string }, depth = 0): void => {
  if (depth > 8) return;
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    const p = v as SchemaLike & { title?: string };
    p.title ??= snake(k);
    addSnakeTitles(p, depth + 1);
  }
  if (schema.items) addSnakeTitles(schema.items as SchemaLike, depth + 1);
  for (const b of schema.anyOf ?? []) addSnakeTitles(b as SchemaLike, depth + 1);
};

/** A body that is not JSON text: kept as a value so that authentication and authorization run first. */
class MalformedBody {}

/** Reads the body as JSON whatever the content type; text that is not JSON becomes a `MalformedBody`. */
const parseJson = async ({ request }: { request: Request }): Promise<unknown> => {
  const text = await request.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return new MalformedBody();
  }
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof MalformedBody);

/**
 * Mounts operations on a new Elysia instance (strict: unknown properties are rejected). Every
 * request goes through, in this order: authentication (`unauthenticated`), authorization on the
 * body as sent (`permission_denied` — a caller without permission learns nothing about the
 * schema), then the body's problems and the schema (`invalid_argument` naming the field), then the
 * handler.
 */
export const mountOperations = (ops: readonly OpDef[], opts: MountOptions) => {
  const principals = new WeakMap<Request, Principal>();
  const states = new WeakMap<Request, CallState>();
  const toResponse = (code: string | number, error: unknown): GatewayError => {
    if (code === 'VALIDATION') {
      const v = validationMessage(error);
      return connectError('invalid_argument', v.message, v.field);
    }
    if (code === 'PARSE')
      return connectError('invalid_argument', 'the request body must be a JSON object (send {} for an empty request)', 'body');
    if (code === 'NOT_FOUND') return connectError('not_found', 'unknown operation');
    if (error instanceof GatewayError) return error;
    if (isDatabaseUnavailable(error)) {
      log.every(
        'management-db-unavailable',
        'warn',
        'management operation: the database is unavailable',
        { error: describeError(error) },
        5_000,
      );
      return databaseUnavailable();
    }
    log.every('management-op-failed', 'error', 'management operation failed', { error: describeError(error) }, 5_000);
    return asGatewayError(error);
  };
  let app = new Elysia({ normalize: false, name: 'connect-operations' }).onError(async (ctx) => {
    const { code, error, request } = ctx;
    const e = toResponse(code, error);
    const state = states.get(request);
    const call = state ? callInfo(request, (ctx as unknown as ServerCtx).server) : undefined;
    // A refused state-changing call is audited on its own (its transaction, if any, rolled back).
    if (state?.def.audit && call) await state.def.audit.refused(call, state.principal, state.body, e);
    return connectResponse(e, call?.requestId);
  });
  for (const def of ops) {
    addSnakeTitles(def.input as SchemaLike);
    app = app.post(
      `/${def.service}/${def.name}`,
      async (ctx) => {
        const { body, request, set } = ctx;
        const principal = principals.get(request);
        if (!principal) throw connectError('unauthenticated', 'missing credentials');
        const call = callInfo(request, (ctx as unknown as ServerCtx).server);
        set.headers['x-request-id'] = call.requestId;
        return def.handler(body, { principal, request, call });
      },
      {
        body: def.input,
        // Always answers (the 'json' entry, never reached, documents the content type in OpenAPI).
        parse: [parseJson, 'json'],
        // Runs before validation: authenticate, authorize on the body as sent, then report what the walk found.
        async transform(ctx) {
          const raw: unknown = ctx.body === undefined ? {} : ctx.body;
          const state: CallState = { def, body: isPlainObject(raw) ? raw : {} };
          states.set(ctx.request, state);
          // A public operation asks for no credential (its body is its proof): whoever calls is anonymous.
          const principal: Principal = def.permission === 'public' ? { kind: 'anonymous' } : await opts.authenticate(ctx.request);
          principals.set(ctx.request, principal);
          state.principal = principal;
          const prepared: PreparedBody = isPlainObject(raw)
            ? prepareBody(raw, def.input)
            : {
                value: {},
                problem: connectError(
                  'invalid_argument',
                  "invalid field 'body': the request body must be a JSON object (send {} for an empty request)",
                  'body',
                ),
              };
          if (def.sessionDefaults && isPlainObject(prepared.value)) prepared.value = def.sessionDefaults(prepared.value, principal);
          state.body = prepared.value;
          await opts.authorize(principal, def, prepared.value);
          if (prepared.problem) throw prepared.problem;
          ctx.body = prepared.value as typeof ctx.body;
        },
        detail: {
          summary: def.summary,
          description: describeOp(def),
          tags: [def.group],
          operationId: def.name,
          'x-permission': def.permission,
          responses: {
            200: { description: 'OK', content: { 'application/json': { schema: def.output } } },
            default: { description: 'Connect error', content: { 'application/json': { schema: ConnectErrorSchema } } },
          },
        } as never,
      },
    ) as unknown as typeof app;
  }
  return app;
};
