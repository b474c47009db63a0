import { mcpPinRoutes } from './dataplane-mcp-pins.ts';
import type { Static, TObject } from '@sinclair/typebox';
import { and, eq, inArray, isNull, max } from 'drizzle-orm';
import { compiled, departure } from '../api/check.ts';
import {
  MAX_PULL_WAIT_S,
  MAX_RECORDS_PER_PUSH,
  type ProtocolName,
  type ProtocolOutput,
  PullRequestSchema,
  PushRecordsRequestSchema,
} from '../api/dataplane.ts';
import { connectError, GatewayError, isDatabaseUnavailable, databaseUnavailable, toConnectBody } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';
import { loadConfigDocument } from '../propagation/load.ts';
import { sealDocument } from '../propagation/seal.ts';
import { dataExportsOf } from './dataplane-exports.ts';
import type { RecordEntry } from '../core/records.ts';
import { pushedEntry } from './pushed-records.ts';
import {
  configChanges,
  dataplanes,
  dataplaneStatus,
  projectGatewayProjects,
  projectGateways,
  type ServiceAccountRow,
} from '../store/schema/index.ts';
import { bearer } from './auth.ts';
import type { ControlDeps } from './deps.ts';
import { verifyServiceAccountJwt } from './service-account-auth.ts';
import type { ConversationStore } from '../core/conversation-store.ts';
import { conversationRoutes } from './dataplane-conversations.ts';

/**
 * The data plane protocol (contract §5), on the management listener; its request and response
 * schemas are src/api/dataplane.ts (requests are validated against them, answers typed by them):
 *
 * - `POST /dataplane.v1.DataplaneService/Pull` `{knownRevision?, appliedRevision?, full?, waitSeconds?}` →
 *   `{dataplaneId, revision, unchanged: true}` when `knownRevision` is the data plane's desired
 *   revision (and `full` is not set) — with `waitSeconds` (at most 30) the call is held until that
 *   revision moves (woken by the configuration channel's NOTIFY, or the propagation worker's poll)
 *   or the wait ends, so a data plane converges at once without polling often — else `{dataplaneId, revision, unchanged: false, document,
 *   sealedKey}`: the configuration of the workspace's project and of the projects attached to
 *   project gateways hosted on it, and the account's `dataExports` (dataplane-exports.ts), every secret field of the document (api/config-document.ts) sealed for the
 *   account (see seal.ts). Records the data plane's applied revision and poll in `dataplane_status`.
 * - `POST /dataplane.v1.DataplaneService/PushRecords` `{records: [...]}` → `{accepted, rejected, errors?}`:
 *   request records of the data plane's customer (a record naming no customer is attributed to it;
 *   one naming another, or one the store could not hold as it is — pushed-records.ts — is refused,
 *   `errors` naming every refused record and why; the data plane keeps those), written by the management plane's
 *   record writer (idempotent by requestId); `unavailable` (503) while the store is down, so the data
 *   plane keeps them.
 *
 * - `POST /dataplane.v1.DataplaneService/{Get,Put,Delete}Conversation`, `GetConversationItem`: the
 *   stored Responses and Messages threads of the projects the data plane serves (see
 *   dataplane-conversations.ts), so that what one data plane stored is usable through another.
 * - `POST /dataplane.v1.DataplaneService/ReportMcpTools` `{profileUuid, serverId, tools}` → `{}`:
 *   what the data plane listed of a pinned MCP server (dataplane-mcp-pins.ts, contract §7.1).
 *
 * All take `Authorization: Bearer <service-account JWT>` with scope `dataplane`. A revoked or
 * expired account gets `unauthenticated` with `reason` `revoked` or `expired`.
 */

export interface RecordWriter {
  add(entry: RecordEntry): void;
  flush(): Promise<void>;
  readonly stats: { storeDown: boolean };
}

export const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
export const fail = (e: unknown): Response => {
  const g = e instanceof GatewayError ? e : isDatabaseUnavailable(e) ? databaseUnavailable() : undefined;
  if (!g) {
    log.error('data plane protocol call failed', { error: describeError(e) });
    return json(500, { code: 'internal', message: 'internal error' });
  }
  return json(g.status, toConnectBody(g));
};

export const authenticate = async (deps: ControlDeps, req: Request): Promise<ServiceAccountRow | Response> => {
  const token = bearer(req);
  const v = token ? await verifyServiceAccountJwt(deps, token) : undefined;
  if (!v) return json(401, { code: 'unauthenticated', message: 'invalid credentials: a service-account JWT is required' });
  if (!v.ok) return json(401, { code: 'unauthenticated', message: `service account ${v.reason}`, reason: v.reason });
  if (!v.account.scopes.includes('dataplane'))
    return json(403, { code: 'permission_denied', message: "the service account lacks scope 'dataplane'" });
  return v.account;
};

export const body = async (req: Request): Promise<Record<string, unknown>> => {
  try {
    const b: unknown = await req.json();
    if (typeof b === 'object' && b !== null && !Array.isArray(b)) return b as Record<string, unknown>;
  } catch {
    // falls through
  }
  throw connectError('invalid_argument', 'the body must be a JSON object');
};

/** How a field's refusal is worded (the protocol's fields; others say what the schema wants). */
const REFUSALS: Record<string, string> = {
  knownRevision: 'knownRevision: an int64',
  appliedRevision: 'appliedRevision: an int64',
  full: 'full: a boolean',
  waitSeconds: `waitSeconds: a number of seconds from 0 to ${MAX_PULL_WAIT_S}`,
  records: `records: an array of at most ${MAX_RECORDS_PER_PUSH}`,
};

/** A request body checked against its schema (src/api/dataplane.ts); a departure is `invalid_argument` naming the field. */
export const valid = <S extends TObject>(schema: S, b: Record<string, unknown>, refusals: Record<string, string> = {}): Static<S> => {
  const check = compiled(schema);
  if (check.Check(b)) return b;
  const at = departure(check, b);
  const field = at.path.split('/')[1] ?? '';
  throw connectError('invalid_argument', refusals[field] ?? REFUSALS[field] ?? `${field || 'body'}: ${at.message}`, field || undefined);
};

/** A 200 answer of a protocol call, typed by its response schema. */
export const answer = <N extends ProtocolName>(value: ProtocolOutput<N>): Response => json(200, value);

const revisionOf = (v: number | string | null | undefined, field: string): number | undefined => {
  if (v === undefined || v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw connectError('invalid_argument', `${field}: an int64`, field);
  return n;
};

/** The workspace row, its change-record targets and the projects it serves. */
export const planeOf = async (deps: ControlDeps, a: ServiceAccountRow) => {
  const [ws] = await deps.db
    .select()
    .from(dataplanes)
    .where(and(eq(dataplanes.customerUuid, a.customerUuid), eq(dataplanes.slug, a.workspaceId), isNull(dataplanes.deletedAt)))
    .limit(1);
  if (!ws) throw connectError('failed_precondition', `workspace '${a.workspaceId}' no longer exists`);
  const gateways = await deps.db
    .select({ id: projectGateways.id })
    .from(projectGateways)
    .where(
      and(
        eq(projectGateways.customerUuid, a.customerUuid),
        eq(projectGateways.workspaceId, a.workspaceId),
        isNull(projectGateways.deletedAt),
      ),
    );
  const attached =
    gateways.length === 0
      ? []
      : await deps.db
          .select({ projectUuid: projectGatewayProjects.projectUuid })
          .from(projectGatewayProjects)
          .where(
            inArray(
              projectGatewayProjects.gatewayId,
              gateways.map((g) => g.id),
            ),
          );
  return {
    ws,
    targets: [ws.id, ...gateways.map((g) => g.id)],
    projectUuids: [...new Set([ws.projectUuid, ...attached.map((p) => p.projectUuid)])],
  };
};

type Plane = Awaited<ReturnType<typeof planeOf>>;

/**
 * What a data plane serves (its scope) read AFTER its desired revision: every change committed
 * before the revision was read is in the scope then. Read the other way round, a change committed
 * in between (a project attached to a gateway the plane hosts) reached the plane as a revision whose
 * document lacked it, and the plane, at that revision, never asked again. When the re-read scope
 * has other targets (a gateway added to or removed from the workspace), the revision is read again
 * for them.
 */
const scopeAfterRevision = async (
  deps: ControlDeps,
  a: ServiceAccountRow,
  plane: Plane,
  revision: number,
): Promise<{ plane: Plane; revision: number }> => {
  let current = { plane, revision };
  for (let i = 0; i < 8; i++) {
    const again = await planeOf(deps, a);
    const same = again.targets.length === current.plane.targets.length && again.targets.every((t, k) => t === current.plane.targets[k]);
    if (same) return { plane: again, revision: current.revision };
    current = { plane: again, revision: await desiredRevisionOf(deps, again.targets) };
  }
  return current;
};

/** The desired revision of a data plane: the newest change record addressed to it (or a gateway it hosts). */
export const desiredRevisionOf = async (deps: Pick<ControlDeps, 'db'>, targets: string[]): Promise<number> => {
  const [row] = await deps.db
    .select({ rev: max(configChanges.id) })
    .from(configChanges)
    .where(inArray(configChanges.target, targets));
  return Number(row?.rev ?? 0);
};

const recordPoll = async (deps: ControlDeps, planeId: string, applied: number | undefined, full: boolean): Promise<void> => {
  const now = new Date();
  const set = {
    lastPollAt: now,
    ...(applied !== undefined ? { appliedRevision: applied } : {}),
    ...(full ? { lastDriftSweepAt: now } : {}),
  };
  await deps.db
    .insert(dataplaneStatus)
    .values({ dataplaneId: planeId, appliedRevision: applied ?? 0, lastPollAt: now, ...(full ? { lastDriftSweepAt: now } : {}) })
    .onConflictDoUpdate({ target: dataplaneStatus.dataplaneId, set });
};

/**
 * Holds until the data plane's desired revision is no longer `known` or `waitMs` passed; returns
 * the desired revision then. The waiter is armed before each read, so a change committed in between
 * is not missed.
 */
const holdWhileUnchanged = async (
  deps: ControlDeps,
  targets: string[],
  known: number,
  revision: number,
  waitMs: number,
): Promise<number> => {
  const signal = deps.configChanged;
  if (!signal || waitMs <= 0 || revision !== known) return revision;
  const deadline = Date.now() + waitMs;
  let current = revision;
  while (current === known) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const w = signal.waiter(left);
    current = await desiredRevisionOf(deps, targets);
    if (current !== known) {
      w.cancel();
      break;
    }
    if (!(await w.fired)) break;
    current = await desiredRevisionOf(deps, targets);
  }
  return current;
};

const handlers = (deps: ControlDeps, records: RecordWriter) => ({
  pull: async (req: Request): Promise<Response> => {
    try {
      const a = await authenticate(deps, req);
      if (a instanceof Response) return a;
      const b = valid(PullRequestSchema, await body(req));
      const known = revisionOf(b.knownRevision, 'knownRevision');
      const applied = revisionOf(b.appliedRevision, 'appliedRevision');
      const full = b.full === true;
      const waitMs = (b.waitSeconds ?? 0) * 1000;
      const before = await planeOf(deps, a);
      await recordPoll(deps, before.ws.id, applied, full);
      const first = await desiredRevisionOf(deps, before.targets);
      const held = full || known === undefined ? first : await holdWhileUnchanged(deps, before.targets, known, first, waitMs);
      if (held !== first) {
        // Held while something changed: the account may have been revoked (its revocation is a change
        // that wakes the hold).
        const still = await authenticate(deps, req);
        if (still instanceof Response) return still;
      }
      // Unchanged: nothing to read (a gateway added to or removed from the workspace is itself a change addressed to the plane).
      const head = (revision: number) => ({ dataplaneId: a.workspaceId, customerId: a.customerId, revision: String(revision) });
      if (!full && known === held) return answer<'Pull'>({ ...head(held), unchanged: true });
      // What the data plane serves (its gateways, their projects) may have moved meanwhile: read after the revision.
      const { plane, revision } = await scopeAfterRevision(deps, a, before, held);
      const doc = await loadConfigDocument(deps.db, deps.secrets, deps.upstreamAllowPrivate, {
        customerUuid: a.customerUuid,
        projectUuids: plane.projectUuids,
        workspace: { id: plane.ws.id, slug: plane.ws.slug, projectUuid: plane.ws.projectUuid },
      });
      const sealed = await sealDocument({ ...doc, revision, dataExports: await dataExportsOf(deps, a) }, a.publicKeyPem);
      return answer<'Pull'>({ ...head(revision), unchanged: false, document: sealed.document, sealedKey: sealed.sealedKey });
    } catch (e) {
      return fail(e);
    }
  },
  push: async (req: Request): Promise<Response> => {
    try {
      const a = await authenticate(deps, req);
      if (a instanceof Response) return a;
      const b = valid(PushRecordsRequestSchema, await body(req));
      let accepted = 0;
      // Every refusal is named (the data plane keeps exactly those records): at most MAX_RECORDS_PER_PUSH.
      const errors: { index: number; message: string }[] = [];
      b.records.forEach((r: unknown, index: number) => {
        const entry = pushedEntry(r, a.customerId);
        if (typeof entry !== 'string') {
          records.add(entry);
          accepted++;
        } else errors.push({ index, message: entry });
      });
      const rejected = errors.length;
      if (rejected > 0)
        log.every('dataplane-push-rejected', 'warn', 'a data plane pushed records that were refused', {
          dataplaneId: a.workspaceId,
          customerId: a.customerId,
          rejected,
          first: errors[0]?.message,
        });
      await records.flush();
      // Rows stay queued in this process too; the data plane re-sends them (idempotent by requestId).
      if (records.stats.storeDown) return json(503, { code: 'unavailable', message: 'the record store is unavailable; retry' });
      return answer<'PushRecords'>({ accepted, rejected, ...(errors.length > 0 ? { errors } : {}) });
    } catch (e) {
      return fail(e);
    }
  },
});

export const dataplaneProtocol = (deps: ControlDeps, records: RecordWriter, conversations?: ConversationStore) => {
  const protocol = handlers(deps, records);
  return {
    ...protocol,
    /** The management listener's raw routes of the protocol. */
    routes: {
      '/dataplane.v1.DataplaneService/Pull': protocol.pull,
      '/dataplane.v1.DataplaneService/PushRecords': protocol.push,
      ...(conversations ? conversationRoutes(deps, conversations) : {}),
      ...mcpPinRoutes(deps),
    } as Record<string, (req: Request) => Promise<Response>>,
  };
};
