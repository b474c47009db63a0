import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import { type ScimGroupRow, scimGroups, scimUsers } from '../../store/schema/index.ts';
import type { Reader, Tx } from '../deps.ts';
import { onUniqueViolation } from '../lookups.ts';
import type { MutationCtx } from '../mutation.ts';
import { GROUP_SCHEMA, isObject, listBody, pagingOf, parseFilter, patchOperations, scimError } from './protocol.ts';
import { syncMemberships } from './sync.ts';
import type { ScimScope } from './users.ts';

/**
 * SCIM Groups (RFC 7643 §4.2) of one customer: members are Users of the same customer; a group
 * named `{projectId}:{role}` drives project memberships (sync.ts).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
type Write = Pick<MutationCtx, 'tx' | 'change'>;

export const groupView = async (db: Reader, g: ScimGroupRow, base: string, withMembers = true): Promise<Record<string, unknown>> => {
  const users =
    withMembers && g.members.length > 0
      ? await db.select({ id: scimUsers.id, userName: scimUsers.userName }).from(scimUsers).where(inArray(scimUsers.id, g.members))
      : [];
  return {
    schemas: [GROUP_SCHEMA],
    id: g.id,
    ...(g.externalId ? { externalId: g.externalId } : {}),
    displayName: g.displayName,
    ...(withMembers ? { members: users.map((u) => ({ value: u.id, display: u.userName, $ref: `${base}/Users/${u.id}` })) } : {}),
    meta: {
      resourceType: 'Group',
      created: g.createdAt.toISOString(),
      lastModified: g.updatedAt.toISOString(),
      location: `${base}/Groups/${g.id}`,
    },
  };
};

/** `excludedAttributes=members` (Entra ID asks so) leaves members out. */
export const withMembers = (url: URL): boolean =>
  !(url.searchParams.get('excludedAttributes') ?? '').split(',').some((a) => a.trim().toLowerCase() === 'members');

export const findGroup = async (db: Reader, scope: ScimScope, id: string, lock = false): Promise<ScimGroupRow> => {
  if (!UUID.test(id)) throw scimError(404, `Group '${id}' not found`);
  const q = db
    .select()
    .from(scimGroups)
    .where(and(eq(scimGroups.id, id), eq(scimGroups.customerUuid, scope.customerUuid)))
    .limit(1);
  const [row] = lock ? await q.for('update') : await q;
  if (!row) throw scimError(404, `Group '${id}' not found`);
  return row;
};

export const listGroups = async (db: Reader, scope: ScimScope, url: URL): Promise<Record<string, unknown>> => {
  const f = parseFilter(url.searchParams.get('filter'), ['displayName', 'externalId', 'id']);
  const { startIndex, count: size } = pagingOf(url);
  const where = and(
    eq(scimGroups.customerUuid, scope.customerUuid),
    !f
      ? undefined
      : f.attribute === 'displayName'
        ? eq(scimGroups.displayName, f.value)
        : f.attribute === 'externalId'
          ? eq(scimGroups.externalId, f.value)
          : UUID.test(f.value)
            ? eq(scimGroups.id, f.value)
            : sql`false`,
  );
  const [total] = await db.select({ n: count() }).from(scimGroups).where(where);
  const rows =
    size === 0
      ? []
      : await db
          .select()
          .from(scimGroups)
          .where(where)
          .orderBy(asc(scimGroups.createdAt), asc(scimGroups.id))
          .offset(startIndex - 1)
          .limit(size);
  const members = withMembers(url);
  return listBody(await Promise.all(rows.map((r) => groupView(db, r, scope.base, members))), total?.n ?? 0, startIndex);
};

/** Member ids from `[{value}]`: each a User of this customer (else invalidValue). */
const memberIds = async (tx: Tx, scope: ScimScope, value: unknown): Promise<string[]> => {
  const list = value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
  const ids = list.map((m, i) => {
    if (!isObject(m) || typeof m.value !== 'string') throw scimError(400, `members[${i}] has no 'value'`, 'invalidValue');
    return m.value;
  });
  const wanted = [...new Set(ids)];
  if (wanted.some((id) => !UUID.test(id))) throw scimError(400, 'a member is not a User of this customer', 'invalidValue');
  const found =
    wanted.length === 0
      ? []
      : await tx
          .select({ id: scimUsers.id })
          .from(scimUsers)
          .where(and(eq(scimUsers.customerUuid, scope.customerUuid), inArray(scimUsers.id, wanted)));
  if (found.length !== wanted.length) throw scimError(400, 'a member is not a User of this customer', 'invalidValue');
  return wanted;
};

const displayNameOf = (v: unknown): string => {
  if (typeof v !== 'string' || v.trim() === '' || v.length > 255)
    throw scimError(400, "'displayName' must be a non-empty string of at most 255 characters", 'invalidValue');
  return v;
};

const unique = async (tx: Tx, scope: ScimScope, displayName: string, except?: string): Promise<void> => {
  const [row] = await tx
    .select({ id: scimGroups.id })
    .from(scimGroups)
    .where(and(eq(scimGroups.customerUuid, scope.customerUuid), eq(scimGroups.displayName, displayName)))
    .limit(1);
  if (row && row.id !== except) throw groupExists(displayName);
};

const groupExists = (displayName: string) => scimError(409, `group '${displayName}' already exists`, 'uniqueness');

/** Re-derives the memberships of every user the group had or has. */
const resync = async (
  { tx, change }: Write,
  scope: ScimScope,
  ids: readonly string[],
  formerNames: readonly string[] = [],
): Promise<void> => {
  const all = [...new Set(ids)];
  if (all.length === 0) return;
  const users = await tx
    .select({ id: scimUsers.id, userName: scimUsers.userName, active: scimUsers.active })
    .from(scimUsers)
    .where(inArray(scimUsers.id, all));
  await syncMemberships(tx, change, scope, users, formerNames);
};

const groupBody = (body: unknown): Record<string, unknown> => {
  if (!isObject(body) || !Array.isArray(body.schemas) || !body.schemas.includes(GROUP_SCHEMA))
    throw scimError(400, `a Group has schemas including "${GROUP_SCHEMA}"`, 'invalidSyntax');
  return body;
};

export const createGroup = async (w: Write, scope: ScimScope, body: unknown): Promise<ScimGroupRow> => {
  const b = groupBody(body);
  const displayName = displayNameOf(b.displayName);
  await unique(w.tx, scope, displayName);
  const members = await memberIds(w.tx, scope, b.members);
  // As for users: the store's unique index refuses a name a writer outside the write lock claimed since the check.
  const [row] = await onUniqueViolation(
    () =>
      w.tx
        .insert(scimGroups)
        .values({
          customerUuid: scope.customerUuid,
          customerId: scope.customerId,
          displayName,
          externalId: typeof b.externalId === 'string' ? b.externalId : null,
          members,
        })
        .returning(),
    () => groupExists(displayName),
  );
  if (!row) throw scimError(409, 'the group was not stored');
  await resync(w, scope, members);
  return row;
};

const save = async (w: Write, scope: ScimScope, old: ScimGroupRow, next: Pick<ScimGroupRow, 'displayName' | 'externalId' | 'members'>) => {
  if (next.displayName !== old.displayName) await unique(w.tx, scope, next.displayName, old.id);
  const [row] = await onUniqueViolation(
    () =>
      w.tx
        .update(scimGroups)
        .set({ ...next, updatedAt: new Date() })
        .where(eq(scimGroups.id, old.id))
        .returning(),
    () => groupExists(next.displayName),
  );
  if (!row) throw scimError(404, `Group '${old.id}' not found`);
  await resync(w, scope, [...old.members, ...row.members], row.displayName === old.displayName ? [] : [old.displayName]);
  return row;
};

export const replaceGroup = async (w: Write, scope: ScimScope, id: string, body: unknown): Promise<ScimGroupRow> => {
  const b = groupBody(body);
  const old = await findGroup(w.tx, scope, id, true);
  return save(w, scope, old, {
    displayName: displayNameOf(b.displayName),
    externalId: typeof b.externalId === 'string' ? b.externalId : null,
    members: await memberIds(w.tx, scope, b.members),
  });
};

/** `members[value eq "<id>"]` (Okta's remove). */
const MEMBER_FILTER = /^members\[\s*value\s+eq\s+"([^"]+)"\s*\]$/i;

export const patchGroup = async (w: Write, scope: ScimScope, id: string, body: unknown): Promise<ScimGroupRow> => {
  const ops = patchOperations(body);
  const old = await findGroup(w.tx, scope, id, true);
  const next = { displayName: old.displayName, externalId: old.externalId, members: [...old.members] };
  for (const o of ops) {
    const path = o.path?.trim();
    const filtered = path ? MEMBER_FILTER.exec(path) : null;
    if (filtered) {
      if (o.op !== 'remove') throw scimError(400, `'${o.op}' on a filtered members path is not supported`, 'invalidPath');
      next.members = next.members.filter((m) => m !== filtered[1]);
    } else if (path?.toLowerCase() === 'members') {
      const ids = o.value === undefined ? [] : await memberIds(w.tx, scope, o.value);
      if (o.op === 'add') next.members = [...new Set([...next.members, ...ids])];
      else if (o.op === 'replace') next.members = ids;
      // Entra ID removes with a value list; without one every member goes.
      else next.members = o.value === undefined ? [] : next.members.filter((m) => !ids.includes(m));
    } else if (path?.toLowerCase() === 'displayname') {
      if (o.op === 'remove') throw scimError(400, 'displayName is required', 'mutability');
      next.displayName = displayNameOf(o.value);
    } else if (path?.toLowerCase() === 'externalid') {
      next.externalId = o.op === 'remove' || typeof o.value !== 'string' ? null : o.value;
    } else if (!path && o.op !== 'remove' && isObject(o.value)) {
      // Okta renames with `{op: replace, value: {id, displayName}}`.
      if (o.value.displayName !== undefined) next.displayName = displayNameOf(o.value.displayName);
      if (typeof o.value.externalId === 'string') next.externalId = o.value.externalId;
      if (o.value.members !== undefined) {
        const ids = await memberIds(w.tx, scope, o.value.members);
        next.members = o.op === 'add' ? [...new Set([...next.members, ...ids])] : ids;
      }
    } else throw scimError(400, `unsupported path '${path ?? ''}' for '${o.op}'`, path ? 'invalidPath' : 'noTarget');
  }
  return save(w, scope, old, next);
};

export const deleteGroup = async (w: Write, scope: ScimScope, id: string): Promise<void> => {
  const old = await findGroup(w.tx, scope, id, true);
  await w.tx.delete(scimGroups).where(eq(scimGroups.id, old.id));
  await resync(w, scope, old.members, [old.displayName]);
};
