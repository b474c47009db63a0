import type { Static, TObject } from '@sinclair/typebox';
import { asGatewayError, databaseUnavailable, GatewayError, isDatabaseUnavailable, toConnectBody } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';
import { sql } from 'drizzle-orm';
import { CONFIG_CHANNEL } from '../propagation/signal.ts';
import { pgliteOf } from '../store/pglite.ts';
import { auditLogs } from '../store/schema/audit.ts';
import { type Actor, actorOf, auditRow, type AuditTarget, type CallInfo, recordedBody, SYSTEM_ACTOR } from './audit-record.ts';
import type { Principal } from './auth.ts';
import type { AuditResource } from '../api/audit-resources.ts';
import type { ActionType, OpSpec } from '../api/op.ts';
import { checkedInput, type OpContext, type OpDef, type OpImpl, type Unchecked } from './connect.ts';
import { type Change, type ControlDeps, recordChange, type Tx } from './deps.ts';

/**
 * The one mutation path. Every state-changing management operation is declared with `mutation`,
 * which owns, in this order: (authentication, authorization and validation run before, in
 * connect.ts) one transaction in which the handler locks and checks the parents and applies the
 * change, the configuration-change rows for every affected data plane (`m.change`), and the audit
 * entry with the actor — all committed together, with a NOTIFY on the configuration channel that
 * PostgreSQL (and PGlite) delivers at commit to whoever LISTENs (the propagation worker, held
 * pulls). The call returns at commit: it never waits for a snapshot to be built. A call refused at any
 * step (authentication, permission, validation, a failed check in the handler, a conflict) rolls
 * back and is audited on its own, outside the failed transaction (`recordRefusal`).
 *
 * A handler says what changes; it never opens a transaction, writes change rows or wakes
 * propagation itself.
 */

export type { ActionType } from '../api/op.ts';

/** What a handler may do inside the mutation's transaction. */
export interface MutationCtx extends OpContext {
  tx: Tx;
  /** Records a configuration change for every affected data plane and gateway (see `recordChange`). */
  change: (change: Change, targets?: readonly string[], extraTargets?: readonly string[]) => Promise<void>;
}

/** The audit declaration of an operation, stored on its OpDef. */
export interface AuditSpec {
  actionType: ActionType;
  resourceType: AuditResource;
  /** The affected resource's id, from the request (and the response once applied); '' when unknown. */
  resourceId: (input: unknown, output?: unknown) => string;
  /** Audits a refused call (outside any transaction); never throws. */
  refused: (call: CallInfo, principal: Principal | undefined, body: unknown, error: unknown) => Promise<void>;
}

/** A composite resource id (`acme/web`): '' unless every part is a non-empty string (a refused body may hold anything). */
export const rid = (...parts: unknown[]): string => (parts.every((p) => typeof p === 'string' && p !== '') ? parts.join('/') : '');

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** The wire outcome of a failure: the status and message the caller saw (never a driver's text). */
const failureOf = (error: unknown): { statusCode: number; errorMessage: string } => {
  const e = error instanceof GatewayError ? error : isDatabaseUnavailable(error) ? databaseUnavailable() : asGatewayError(error);
  return { statusCode: e.status, errorMessage: toConnectBody(e).message };
};

const writeRefusal = async (
  deps: ControlDeps,
  call: CallInfo,
  actor: Actor,
  target: AuditTarget,
  body: unknown,
  error: unknown,
): Promise<void> => {
  const f = failureOf(error);
  try {
    await deps.db.insert(auditLogs).values(auditRow(call, actor, target, body, { ...f, success: false, responseData: {} }));
  } catch (e) {
    log.every(
      'audit-refusal-unwritten',
      isDatabaseUnavailable(e) ? 'warn' : 'error',
      'a refused management call could not be audited',
      { endpoint: call.endpoint, requestId: call.requestId, error: describeError(e) },
      5_000,
    );
  }
};

/**
 * Held by every management write from its first statement to its commit. A data plane's revision is
 * the highest change row id it has seen (a NOTIFY or a poll reads it); ids come from a sequence,
 * which numbers rows when they are inserted, not when they commit. Two writes committing out of
 * order (B numbered after A, committed before it) would leave A's change behind a revision the
 * planes already serve, unseen until a full sync. Serialising the writes makes ids follow commit
 * order; taken first, before any row lock, it cannot deadlock with them. Management writes take
 * milliseconds, so the queue it forms is short.
 */
const CHANGE_ORDER_LOCK = 0x63686731; // 'chg1'

/** Takes CHANGE_ORDER_LOCK on PostgreSQL; PGlite runs one transaction at a time, so commits already follow ids there. */
const orderWrites = async (deps: ControlDeps, tx: Tx): Promise<void> => {
  if (pgliteOf(deps.db) === undefined) await tx.execute(sql`select pg_advisory_xact_lock(${CHANGE_ORDER_LOCK})`);
};

/**
 * `m.change` inside one transaction: writes the change rows and, once per transaction, a NOTIFY
 * (delivered at commit, dropped on rollback; its payload is informative only — the listener reads
 * the revision itself).
 */
const changeIn = (deps: ControlDeps, tx: Tx): MutationCtx['change'] => {
  let notified = false;
  return async (c, targets, extra) => {
    await recordChange(tx, c, targets, extra);
    if (notified) return;
    notified = true;
    deps.changeRecorded?.();
    await tx.execute(sql`select pg_notify(${CONFIG_CHANNEL}, '')`);
  };
};

/** A mutation with its types checked at its edges: what `build` mounts. */
interface MutationCore {
  spec: OpSpec & { mutates: { action: ActionType; resource: AuditResource } };
  scope?: OpDef['scope'];
  sessionDefaults?: OpDef['sessionDefaults'];
  /** The resource id read off a body that may not have passed validation (a refused call); '' when unknown. */
  idOfBody: (body: unknown) => string;
  before?: (input: unknown, ctx: OpContext) => Promise<void>;
  /** Applies the change in the transaction; answers the result and the affected resource's id. */
  apply: (input: unknown, m: MutationCtx) => Promise<{ result: object; id: string }>;
}

const build = (deps: ControlDeps, core: MutationCore): OpDef => {
  const { spec, scope, sessionDefaults, idOfBody, before, apply } = core;
  const { action, resource } = spec.mutates;
  const audit: AuditSpec = {
    actionType: action,
    resourceType: resource,
    resourceId: idOfBody,
    refused: (call, principal, body, error) =>
      writeRefusal(deps, call, actorOf(principal), { actionType: action, resourceType: resource, resourceId: idOfBody(body) }, body, error),
  };
  const run = async (input: unknown, ctx: OpContext): Promise<object> => {
    if (before) await before(input, ctx);
    return deps.db.transaction(async (tx) => {
      await orderWrites(deps, tx);
      const m: MutationCtx = { ...ctx, tx, change: changeIn(deps, tx) };
      const { result, id } = await apply(input, m);
      const target = { actionType: action, resourceType: resource, resourceId: id };
      await tx.insert(auditLogs).values(
        auditRow(ctx.call, actorOf(ctx.principal), target, input, {
          statusCode: 200,
          success: true,
          errorMessage: '',
          responseData: recordedBody(result),
        }),
      );
      return result;
    });
  };
  return { ...spec, ...(scope ? { scope } : {}), ...(sessionDefaults ? { sessionDefaults } : {}), audit, handler: run };
};

/** An operation spec that changes state (`mutates` says how its calls are audited). */
export type MutationSpec<S extends TObject, O extends TObject> = OpSpec<S, O> & {
  mutates: { action: ActionType; resource: AuditResource };
};

/** What the server adds to a state-changing operation's spec. */
export interface MutationImpl<S extends TObject, O extends TObject> extends Omit<OpImpl<S, O>, 'handler'> {
  /** The affected resource's id from the input (as sent, for a refused call) and, once applied, the output. */
  resourceId: (input: Unchecked<Static<S>>, output?: Static<O>) => string | undefined;
  /** Work that must happen before the transaction opens and is no part of this change. A failure here is a refused call. */
  before?: (input: Static<S>, ctx: OpContext) => Promise<void>;
  handler: (input: Static<S>, m: MutationCtx) => Promise<Static<O>>;
}

const isRecord = (v: unknown): v is Readonly<Record<string, unknown>> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Declares a state-changing operation: its handler runs on the mutation path. */
export const mutation = <S extends TObject, O extends TObject>(
  deps: ControlDeps,
  spec: MutationSpec<S, O>,
  impl: MutationImpl<S, O>,
): OpDef => {
  const { scope, sessionDefaults, resourceId, before, handler } = impl;
  return build(deps, {
    spec,
    ...(scope ? { scope: (i: Readonly<Record<string, unknown>>) => scope(i) } : {}),
    ...(sessionDefaults ? { sessionDefaults } : {}),
    idOfBody: (body) => (isRecord(body) ? safeId(() => resourceId(body)) : ''),
    ...(before ? { before: (i: unknown, ctx: OpContext) => before(checkedInput(spec.input, i), ctx) } : {}),
    apply: async (i, m) => {
      const input = checkedInput(spec.input, i);
      const result = await handler(input, m);
      return { result, id: safeId(() => resourceId(input, result)) };
    },
  });
};

const safeId = (fn: () => string | undefined): string => {
  try {
    return str(fn());
  } catch {
    return '';
  }
};

/**
 * The same path for work the gateway does on its own (no caller: e.g. creating a signing key on
 * first use). Audited with actorType `system`; `cause` (the request that made it necessary) is kept
 * in the entry's metadata.
 */
export const systemMutation = async <T>(
  deps: ControlDeps,
  target: AuditTarget,
  apply: (m: Pick<MutationCtx, 'tx' | 'change'>) => Promise<T | undefined>,
  cause?: CallInfo,
): Promise<T | undefined> => {
  // Never called inside a mutation's transaction (a signing key is made in the operation's `before`):
  // it takes the same ordering lock, which that transaction would hold.
  return deps.db.transaction(async (tx) => {
    await orderWrites(deps, tx);
    const result = await apply({ tx, change: changeIn(deps, tx) });
    // Nothing applied (another replica did it first): nothing to audit.
    if (result === undefined) return undefined;
    const extra = cause ? { cause: { requestId: cause.requestId, endpoint: cause.endpoint } } : {};
    await tx
      .insert(auditLogs)
      .values(auditRow(undefined, SYSTEM_ACTOR, target, {}, { statusCode: 200, success: true, errorMessage: '', responseData: {} }, extra));
    return result;
  });
};

/**
 * The same path for a write that is not a Connect operation (the SCIM endpoint, scim/routes.ts):
 * one transaction with the change rows and the audit entry of `actor`; a refusal is audited on its own.
 */
export const callerMutation = async <T extends object>(
  deps: ControlDeps,
  who: { call: CallInfo; actor: Actor; target: AuditTarget; body: unknown },
  apply: (m: Pick<MutationCtx, 'tx' | 'change'>) => Promise<{ result: T; resourceId: string }>,
): Promise<T> => {
  try {
    return await deps.db.transaction(async (tx) => {
      await orderWrites(deps, tx);
      const { result, resourceId } = await apply({ tx, change: changeIn(deps, tx) });
      const target = { ...who.target, resourceId: resourceId || who.target.resourceId };
      await tx.insert(auditLogs).values(
        auditRow(who.call, who.actor, target, who.body, {
          statusCode: 200,
          success: true,
          errorMessage: '',
          responseData: recordedBody(result),
        }),
      );
      return result;
    });
  } catch (e) {
    await writeRefusal(deps, who.call, who.actor, who.target, who.body, e);
    throw e;
  }
};
