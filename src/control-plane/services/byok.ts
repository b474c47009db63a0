import { checkProviderKey } from '../../api/ops/connections.ts';
import { and, asc, eq, or } from 'drizzle-orm';
import { DEFAULT_PROJECT, projectOrDefault, ts } from '../../api/kit.ts';
import { ByokOps } from '../../api/ops/byok.ts';
import { connectError } from '../../core/errors.ts';
import { randomToken } from '../../core/ids.ts';
import { type ByokKeyRow, byokKeys } from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import { namedScope, op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import { findProject, inLiveProject, lockProject } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { checkConnectionUrls } from '../upstream-addresses.ts';

/**
 * BYOK provider keys (byok.v1.ByokService; specs and scope rules in src/api/ops/byok.ts). A
 * user-scoped key is visible only to its owner (and the platform admin); a project-level key is
 * registered, revoked and fetched by the project owner.
 */

const { Register, Get, List, Revoke, Fetch } = ByokOps;

const view = (k: ByokKeyRow) => ({
  id: k.id,
  name: k.name,
  provider: k.provider,
  customerId: k.customerId,
  projectId: k.projectId,
  displaySuffix: k.displaySuffix,
  secretRef: `byok://${k.customerId}/${k.projectId}/${k.id}`,
  userScope: k.userScope,
  scopeUserId: k.scopeUserId,
  createdAt: ts(k.createdAt),
  updatedAt: ts(k.updatedAt),
  ...(k.revokedAt ? { revokedAt: ts(k.revokedAt) } : {}),
});

/** customerId/projectId left empty: the caller's session (user tokens only). */
const fromSession = (body: Record<string, unknown>, p: Principal): Record<string, unknown> => {
  if (p.kind !== 'user') return body;
  const out = { ...body };
  if (out.customerId === undefined || out.customerId === null || out.customerId === '') out.customerId = p.customerId;
  if (out.projectId === undefined || out.projectId === null || out.projectId === '') out.projectId = p.projectId ?? DEFAULT_PROJECT;
  return out;
};

const needCustomer = (customerId: string | undefined): string => {
  if (!customerId)
    throw connectError(
      'invalid_argument',
      "invalid field 'customerId': required (the platform-admin token has no session to default it from)",
      'customerId',
    );
  return customerId;
};

const isOwner = (p: Principal, projectId: string): boolean =>
  p.kind === 'platform_admin' || p.kind === 'system' || (p.kind === 'user' && p.roles.get(projectId) === 'admin');

/** A user-scoped key is visible to its owner (and the platform admin) only. */
const visible = (p: Principal, k: ByokKeyRow): boolean => !k.userScope || p.kind !== 'user' || p.userId === k.scopeUserId;

const notFound = (id: string) => connectError('not_found', `BYOK key '${id}' not found`, 'id');

const findKey = async (
  db: Reader,
  id: string,
  customerId: string,
  projectId: string | undefined,
  lock = false,
): Promise<ByokKeyRow | undefined> => {
  const q = db
    .select()
    .from(byokKeys)
    .where(and(eq(byokKeys.id, id), eq(byokKeys.customerId, customerId), inLiveProject(db, byokKeys.projectUuid, customerId, projectId)))
    .limit(1);
  return (lock ? await q.for('update') : await q)[0];
};

export const byokOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, Register, {
    resourceId: (_i, o) => o?.key.id ?? '',
    sessionDefaults: fromSession,
    scope: namedScope,
    handler: async (input, { tx, change, principal }) => {
      const customerId = needCustomer(input.customerId);
      const projectId = projectOrDefault(input.projectId);
      const userScope = input.userScope === true;
      checkProviderKey('secret', input.provider, input.secret);
      if (userScope && principal.kind !== 'user')
        throw connectError(
          'failed_precondition',
          "a user-scoped key belongs to the calling user: register it with that user's token",
          'userScope',
        );
      if (!userScope && !isOwner(principal, projectId))
        throw connectError(
          'permission_denied',
          `a project-level key requires the project owner (the admin role in project '${projectId}')`,
          'userScope',
        );
      // A credential URL inside the secret (a service account's token_uri) follows the connection rule (contract §3.1).
      await checkConnectionUrls(principal, deps.upstreamAllowPrivate === true, { apiKey: input.secret });
      const project = await lockProject(tx, customerId, projectId);
      const id = `byok_${randomToken(24)}`;
      const [row] = await tx
        .insert(byokKeys)
        .values({
          id,
          name: input.name,
          provider: input.provider,
          customerUuid: project.customerUuid,
          projectUuid: project.id,
          customerId: project.customerId,
          projectId: project.projectId,
          userScope,
          scopeUserId: userScope && principal.kind === 'user' ? principal.userId : '',
          secretWrapped: deps.secrets.wrap(input.secret),
          displaySuffix: input.secret.slice(-4),
        })
        .returning();
      await change({ resource: 'byokKey' as const, entityId: id, customerId: project.customerId, projectId: project.projectId });
      return { key: view(row as ByokKeyRow) };
    },
  }),
  op(Get, {
    sessionDefaults: fromSession,
    scope: namedScope,
    handler: async (input, { principal }) => {
      const row = await findKey(deps.db, input.id, needCustomer(input.customerId), input.projectId);
      if (!row || !visible(principal, row)) throw notFound(input.id);
      return { key: view(row) };
    },
  }),
  op(List, {
    sessionDefaults: fromSession,
    scope: namedScope,
    handler: async (input, { principal }) => {
      const customerId = needCustomer(input.customerId);
      await findProject(deps.db, customerId, input.projectId);
      const own = principal.kind === 'user' ? or(eq(byokKeys.userScope, false), eq(byokKeys.scopeUserId, principal.userId)) : undefined;
      const rows = await deps.db
        .select()
        .from(byokKeys)
        .where(and(inLiveProject(deps.db, byokKeys.projectUuid, customerId, input.projectId), own))
        .orderBy(asc(byokKeys.createdAt), asc(byokKeys.id))
        .limit(1000);
      return { keys: rows.map(view) };
    },
  }),
  mutation(deps, Revoke, {
    resourceId: (i) => rid(i.id),
    sessionDefaults: fromSession,
    scope: namedScope,
    handler: async (input, { tx, change, principal }) => {
      const customerId = needCustomer(input.customerId);
      await lockProject(tx, customerId, input.projectId);
      const row = await findKey(tx, input.id, customerId, input.projectId, true);
      if (!row || !visible(principal, row)) throw notFound(input.id);
      if (!row.userScope && !isOwner(principal, row.projectId))
        throw connectError(
          'permission_denied',
          `revoking a project-level key requires the project owner (the admin role in project '${row.projectId}')`,
        );
      if (!row.revokedAt) {
        const at = new Date();
        await tx.update(byokKeys).set({ revokedAt: at, updatedAt: at }).where(eq(byokKeys.id, row.id));
        await change({ resource: 'byokKey' as const, entityId: row.id, customerId: row.customerId, projectId: row.projectId });
      }
      return {};
    },
  }),
  op(Fetch, {
    // The key names its project: the scope is looked up (an unknown id is no access for a user).
    scope: async (i) => {
      if (typeof i.id !== 'string') return undefined;
      const [row] = await deps.db
        .select({ customerId: byokKeys.customerId, customerUuid: byokKeys.customerUuid, projectId: byokKeys.projectId })
        .from(byokKeys)
        .where(eq(byokKeys.id, i.id))
        .limit(1);
      return row ? { customerId: row.customerId, customerUuid: row.customerUuid, projectId: row.projectId } : undefined;
    },
    handler: async (input, { principal }) => {
      const [row] = await deps.db.select().from(byokKeys).where(eq(byokKeys.id, input.id)).limit(1);
      if (!row || !visible(principal, row)) throw notFound(input.id);
      const live = await findKey(deps.db, row.id, row.customerId, row.projectId);
      if (!live) throw notFound(input.id);
      if (!row.userScope && !isOwner(principal, row.projectId))
        throw connectError(
          'permission_denied',
          `fetching a project-level key requires the project owner (the admin role in project '${row.projectId}')`,
        );
      if (row.revokedAt) throw connectError('failed_precondition', `BYOK key '${row.id}' is revoked`, 'id');
      return { provider: row.provider, displaySuffix: row.displaySuffix, secret: deps.secrets.unwrap(row.secretWrapped) };
    },
  }),
];
