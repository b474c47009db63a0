import { and, asc, eq, or } from 'drizzle-orm';
import { t } from 'elysia';
import { BYOK_PROVIDER_NAMES } from '../../core/byok.ts';
import { connectError } from '../../core/errors.ts';
import { randomToken } from '../../core/ids.ts';
import { type ByokKeyRow, byokKeys } from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import { findProject, inLiveProject, lockProject } from '../lookups.ts';
import { mutation } from '../mutation.ts';
import { CustomerRef, DEFAULT_PROJECT, Enum, OptTimestamp, ProjectRef, projectOrDefault, Str, Timestamp, ts } from '../schemas.ts';
import { checkConnectionUrls } from '../upstream-addresses.ts';

/**
 * BYOK provider keys (byok.v1.ByokService). The seed's five providers — two general LLM vendors,
 * a cloud-hosted variant of the first and two cloud-platform model services — and the provider ids
 * (adapters) whose traffic each key serves:
 *
 *   PROVIDER_OPENAI       → openai
 *   PROVIDER_ANTHROPIC    → anthropic
 *   PROVIDER_AZURE_OPENAI → azure-openai
 *   PROVIDER_BEDROCK      → bedrock
 *   PROVIDER_VERTEX       → vertex
 *
 * Scope: a project-level key (userScope false) is registered and revoked by the project owner (a
 * user with the `admin` role in the project, or the platform admin) and visible to every member;
 * a user-scoped key belongs to the calling user (any member registers one for themself), is
 * visible only to that user (and the platform admin), and is preferred over the project key for
 * that user's inference traffic. customerId/projectId default to the caller's session (the user
 * token's customer and `project` claim, else the default project).
 */

const SERVICE = 'byok.v1.ByokService' as const;
const GROUP = 'BYOK keys';

const ProviderIn = () => Enum(BYOK_PROVIDER_NAMES, `one of ${BYOK_PROVIDER_NAMES.join(', ')} (PROVIDER_UNSPECIFIED is refused)`);

export const AiKey = t.Object(
  {
    id: t.String({ description: 'byok_…' }),
    name: t.String(),
    provider: t.String({ description: 'PROVIDER_…' }),
    customerId: t.String(),
    projectId: t.String(),
    displaySuffix: t.String({ description: 'last 4 characters of the secret' }),
    secretRef: t.String({ description: 'reference to the wrapped secret: byok://<customerId>/<projectId>/<id>' }),
    userScope: t.Boolean(),
    scopeUserId: t.String({ description: "owner of a user-scoped key; '' for a project-level key" }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    revokedAt: OptTimestamp('absent while active'),
  },
  { description: 'a BYOK key (never the secret)' },
);

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

const Scoped = { customerId: t.Optional(CustomerRef()), projectId: t.Optional(ProjectRef()) };
const scopeOf = (i: { customerId?: string; projectId?: string }) => (i.customerId ? { customerId: i.customerId, projectId: projectOrDefault(i.projectId) } : undefined);

const needCustomer = (customerId: string | undefined): string => {
  if (!customerId) throw connectError('invalid_argument', "invalid field 'customerId': required (the platform-admin token has no session to default it from)", 'customerId');
  return customerId;
};

const isOwner = (p: Principal, projectId: string): boolean => p.kind === 'platform_admin' || p.kind === 'system' || (p.kind === 'user' && p.roles.get(projectId) === 'admin');

/** A user-scoped key is visible to its owner (and the platform admin) only. */
const visible = (p: Principal, k: ByokKeyRow): boolean => !k.userScope || p.kind !== 'user' || p.userId === k.scopeUserId;

const notFound = (id: string) => connectError('not_found', `BYOK key '${id}' not found`, 'id');

const findKey = async (db: Reader, id: string, customerId: string, projectId: string | undefined, lock = false): Promise<ByokKeyRow | undefined> => {
  const q = db
    .select()
    .from(byokKeys)
    .where(and(eq(byokKeys.id, id), eq(byokKeys.customerId, customerId), inLiveProject(db, byokKeys.projectUuid, customerId, projectId)))
    .limit(1);
  return (lock ? await q.for('update') : await q)[0];
};

export const byokOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'byok_key',
    resourceId: (_i, o) => o?.key.id ?? '',
    service: SERVICE,
    group: GROUP,
    name: 'Register',
    summary: 'Register a provider key (wrapped at once; never returned except by Fetch)',
    notes:
      'userScope false (default): a project-level key — only the project owner (admin role, or the platform admin). userScope true: a key of the calling user, for themself (any project member; not the platform-admin token). customerId/projectId default to the session. Provider ids: PROVIDER_OPENAI → openai, PROVIDER_ANTHROPIC → anthropic, PROVIDER_AZURE_OPENAI → azure-openai, PROVIDER_BEDROCK → bedrock (a Bedrock API key, or `ACCESS_KEY_ID:SECRET_ACCESS_KEY` for SigV4), PROVIDER_VERTEX → vertex (the service-account JSON).',
    permission: 'project_member',
    sessionDefaults: fromSession,
    scope: scopeOf,
    input: t.Object(
      {
        provider: ProviderIn(),
        name: Str(1, 255, { description: 'operator label (1-255)' }),
        secret: Str(1, 16384, { description: 'plaintext provider key; wrapped immediately, never returned except by Fetch' }),
        userScope: t.Optional(t.Boolean({ description: 'default false' })),
        ...Scoped,
      },
      { additionalProperties: false },
    ),
    output: t.Object({ key: AiKey }),
    handler: async (input, { tx, change, principal }) => {
      const customerId = needCustomer(input.customerId);
      const projectId = projectOrDefault(input.projectId);
      const userScope = input.userScope === true;
      if (userScope && principal.kind !== 'user')
        throw connectError('failed_precondition', 'a user-scoped key belongs to the calling user: register it with that user\'s token', 'userScope');
      if (!userScope && !isOwner(principal, projectId))
        throw connectError('permission_denied', `a project-level key requires the project owner (the admin role in project '${projectId}')`, 'userScope');
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
  op({
    service: SERVICE,
    group: GROUP,
    name: 'Get',
    summary: 'A BYOK key (metadata only)',
    notes: "A user-scoped key is visible only to its owner (and the platform admin): others get not_found. customerId/projectId default to the session.",
    permission: 'project_member',
    sessionDefaults: fromSession,
    scope: scopeOf,
    input: t.Object({ id: Str(1, 64, { description: 'byok_… id' }), ...Scoped }, { additionalProperties: false }),
    output: t.Object({ key: AiKey }),
    handler: async (input, { principal }) => {
      const row = await findKey(deps.db, input.id, needCustomer(input.customerId), input.projectId);
      if (!row || !visible(principal, row)) throw notFound(input.id);
      return { key: view(row) };
    },
  }),
  op({
    service: SERVICE,
    group: GROUP,
    name: 'List',
    summary: "A project's BYOK keys (metadata only): project-level keys and the caller's own user-scoped keys",
    notes: 'Revoked keys are listed with revokedAt. customerId/projectId default to the session.',
    permission: 'project_member',
    sessionDefaults: fromSession,
    scope: scopeOf,
    input: t.Object(Scoped, { additionalProperties: false }),
    output: t.Object({ keys: t.Array(AiKey) }),
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
  mutation(deps, {
    action: 'REVOKE',
    resource: 'byok_key',
    resourceId: (i) => i.id,
    service: SERVICE,
    group: GROUP,
    name: 'Revoke',
    summary: 'Revoke a BYOK key; inference stops using it once the change reaches the data plane',
    notes: 'A project-level key: the project owner (admin role) or the platform admin; a user-scoped key: its owner or the platform admin. Revoking a revoked key changes nothing.',
    permission: 'project_member',
    sessionDefaults: fromSession,
    scope: scopeOf,
    input: t.Object({ id: Str(1, 64, { description: 'byok_… id' }), ...Scoped }, { additionalProperties: false }),
    output: t.Object({}),
    handler: async (input, { tx, change, principal }) => {
      const customerId = needCustomer(input.customerId);
      await lockProject(tx, customerId, input.projectId);
      const row = await findKey(tx, input.id, customerId, input.projectId, true);
      if (!row || !visible(principal, row)) throw notFound(input.id);
      if (!row.userScope && !isOwner(principal, row.projectId))
        throw connectError('permission_denied', `revoking a project-level key requires the project owner (the admin role in project '${row.projectId}')`);
      if (!row.revokedAt) {
        const at = new Date();
        await tx.update(byokKeys).set({ revokedAt: at, updatedAt: at }).where(eq(byokKeys.id, row.id));
        await change({ resource: 'byokKey' as const, entityId: row.id, customerId: row.customerId, projectId: row.projectId });
      }
      return {};
    },
  }),
  op({
    service: SERVICE,
    group: GROUP,
    name: 'Fetch',
    summary: 'The decrypted secret of an active BYOK key',
    notes:
      "Only an active key (a revoked one is failed_precondition). A project-level key: the project owner (admin role) or the platform admin; a user-scoped key: its owner or the platform admin. The data plane does not call Fetch: it receives the keys it needs with its configuration.",
    permission: 'project_member',
    // The key names its project: the scope is looked up (an unknown id is no access for a user).
    scope: async (i) => {
      const [row] = await deps.db
        .select({ customerId: byokKeys.customerId, customerUuid: byokKeys.customerUuid, projectId: byokKeys.projectId })
        .from(byokKeys)
        .where(eq(byokKeys.id, i.id))
        .limit(1);
      return row ? { customerId: row.customerId, customerUuid: row.customerUuid, projectId: row.projectId } : undefined;
    },
    input: t.Object({ id: Str(1, 64, { description: 'byok_… id' }) }, { additionalProperties: false }),
    output: t.Object({ provider: t.String(), displaySuffix: t.String(), secret: t.String({ description: 'decrypted plaintext' }) }),
    handler: async (input, { principal }) => {
      const [row] = await deps.db.select().from(byokKeys).where(eq(byokKeys.id, input.id)).limit(1);
      if (!row || !visible(principal, row)) throw notFound(input.id);
      const live = await findKey(deps.db, row.id, row.customerId, row.projectId);
      if (!live) throw notFound(input.id);
      if (!row.userScope && !isOwner(principal, row.projectId))
        throw connectError('permission_denied', `fetching a project-level key requires the project owner (the admin role in project '${row.projectId}')`);
      if (row.revokedAt) throw connectError('failed_precondition', `BYOK key '${row.id}' is revoked`, 'id');
      return { provider: row.provider, displaySuffix: row.displaySuffix, secret: deps.secrets.unwrap(row.secretWrapped) };
    },
  }),
];

