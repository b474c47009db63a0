import { and, asc, count, eq, sql } from 'drizzle-orm';
import { type ScimUserRow, scimGroups, scimUsers } from '../../store/schema/index.ts';
import type { Reader, Tx } from '../deps.ts';
import { onUniqueViolation } from '../lookups.ts';
import type { MutationCtx } from '../mutation.ts';
import {
  boolOf,
  isObject,
  listBody,
  type PatchOperation,
  pagingOf,
  parseFilter,
  patchOperations,
  scimError,
  USER_SCHEMA,
} from './protocol.ts';
import { syncMemberships } from './sync.ts';

/** SCIM Users (RFC 7643 §4.1) of one customer: `userName` is the gateway userId. */

export interface ScimScope {
  customerUuid: string;
  customerId: string;
  /** `https://host/scim/v2` as the provider called it, for `meta.location`. */
  base: string;
}

/** Attributes the gateway reads itself; every other one the provider sends is kept as sent (never `password`). */
const OWN = new Set(['schemas', 'id', 'meta', 'userName', 'active', 'externalId', 'displayName', 'password']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const userView = (u: ScimUserRow, base: string): Record<string, unknown> => ({
  ...u.resource,
  // The core schema and every extension the provider sent (Entra ID's enterprise User).
  schemas: [USER_SCHEMA, ...Object.keys(u.resource).filter((k) => k.startsWith('urn:'))],
  id: u.id,
  ...(u.externalId ? { externalId: u.externalId } : {}),
  userName: u.userName,
  ...(u.displayName ? { displayName: u.displayName } : {}),
  active: u.active,
  meta: {
    resourceType: 'User',
    created: u.createdAt.toISOString(),
    lastModified: u.updatedAt.toISOString(),
    location: `${base}/Users/${u.id}`,
  },
});

interface UserFields {
  userName: string;
  active: boolean;
  externalId: string | null;
  displayName: string | null;
  resource: Record<string, unknown>;
}

const text = (v: unknown, field: string, max: number): string => {
  if (typeof v !== 'string' || v.trim() === '' || v.length > max)
    throw scimError(400, `'${field}' must be a non-empty string of at most ${max} characters`, 'invalidValue');
  return v;
};
const optText = (v: unknown, field: string): string | null => (v === undefined || v === null ? null : text(v, field, 255));

/** A User body (POST, PUT): a SCIM User resource, else the RFC's invalidSyntax. */
const fieldsOf = (body: unknown): UserFields => {
  if (!isObject(body) || !Array.isArray(body.schemas) || !body.schemas.includes(USER_SCHEMA))
    throw scimError(400, `a User has schemas including "${USER_SCHEMA}"`, 'invalidSyntax');
  const extra = Object.fromEntries(Object.entries(body).filter(([k]) => !OWN.has(k)));
  return {
    userName: text(body.userName, 'userName', 255),
    active: body.active === undefined ? true : boolOf(body.active, 'active'),
    externalId: optText(body.externalId, 'externalId'),
    displayName: optText(body.displayName, 'displayName'),
    resource: extra,
  };
};

export const findUser = async (db: Reader, scope: ScimScope, id: string, lock = false): Promise<ScimUserRow> => {
  if (!UUID.test(id)) throw scimError(404, `User '${id}' not found`);
  const q = db
    .select()
    .from(scimUsers)
    .where(and(eq(scimUsers.id, id), eq(scimUsers.customerUuid, scope.customerUuid)))
    .limit(1);
  const [row] = lock ? await q.for('update') : await q;
  if (!row) throw scimError(404, `User '${id}' not found`);
  return row;
};

const alreadyProvisioned = (userName: string) => scimError(409, `userName '${userName}' is already provisioned`, 'uniqueness');

const taken = async (tx: Tx, scope: ScimScope, userName: string, except?: string): Promise<void> => {
  const [row] = await tx
    .select({ id: scimUsers.id })
    .from(scimUsers)
    .where(and(eq(scimUsers.customerUuid, scope.customerUuid), sql`lower(${scimUsers.userName}) = lower(${userName})`))
    .limit(1);
  if (row && row.id !== except) throw alreadyProvisioned(userName);
};

export const listUsers = async (db: Reader, scope: ScimScope, url: URL): Promise<Record<string, unknown>> => {
  const f = parseFilter(url.searchParams.get('filter'), ['userName', 'externalId', 'id']);
  const { startIndex, count: size } = pagingOf(url);
  const where = and(
    eq(scimUsers.customerUuid, scope.customerUuid),
    !f
      ? undefined
      : f.attribute === 'userName'
        ? sql`lower(${scimUsers.userName}) = lower(${f.value})`
        : f.attribute === 'externalId'
          ? eq(scimUsers.externalId, f.value)
          : UUID.test(f.value)
            ? eq(scimUsers.id, f.value)
            : sql`false`,
  );
  const [total] = await db.select({ n: count() }).from(scimUsers).where(where);
  const rows =
    size === 0
      ? []
      : await db
          .select()
          .from(scimUsers)
          .where(where)
          .orderBy(asc(scimUsers.createdAt), asc(scimUsers.id))
          .offset(startIndex - 1)
          .limit(size);
  return listBody(
    rows.map((r) => userView(r, scope.base)),
    total?.n ?? 0,
    startIndex,
  );
};

type Write = Pick<MutationCtx, 'tx' | 'change'>;

export const createUser = async ({ tx, change }: Write, scope: ScimScope, body: unknown): Promise<ScimUserRow> => {
  const f = fieldsOf(body);
  await taken(tx, scope, f.userName);
  // The check above runs under the management write lock; a writer outside it may still claim the
  // name before the insert, and the store's unique index then refuses it: the same 409.
  const [row] = await onUniqueViolation(
    () =>
      tx
        .insert(scimUsers)
        .values({ customerUuid: scope.customerUuid, customerId: scope.customerId, ...f })
        .returning(),
    () => alreadyProvisioned(f.userName),
  );
  if (!row) throw scimError(409, 'the user was not stored');
  await syncMemberships(tx, change, scope, [{ id: row.id, userName: row.userName, active: row.active }]);
  return row;
};

/** Applies new fields; a changed userName ends the old identity (its memberships and tokens) first. */
const store = async ({ tx, change }: Write, scope: ScimScope, old: ScimUserRow, f: UserFields): Promise<ScimUserRow> => {
  if (f.userName !== old.userName) {
    await taken(tx, scope, f.userName, old.id);
    await syncMemberships(tx, change, scope, [{ id: old.id, userName: old.userName, active: false }]);
  }
  const [row] = await onUniqueViolation(
    () =>
      tx
        .update(scimUsers)
        .set({ ...f, updatedAt: new Date() })
        .where(eq(scimUsers.id, old.id))
        .returning(),
    () => alreadyProvisioned(f.userName),
  );
  if (!row) throw scimError(404, `User '${old.id}' not found`);
  await syncMemberships(tx, change, scope, [{ id: row.id, userName: row.userName, active: row.active }]);
  return row;
};

export const replaceUser = async (w: Write, scope: ScimScope, id: string, body: unknown): Promise<ScimUserRow> =>
  store(w, scope, await findUser(w.tx, scope, id, true), fieldsOf(body));

/** `attr`, `attr.sub`, `attr[type eq "x"].sub` or `<extension URN>:attr` (the forms Okta and Entra ID send), set in `resource`. */
const setPath = (resource: Record<string, unknown>, path: string, value: unknown, remove: boolean): void => {
  const ext = /^(urn:[\w.:-]+:User):([A-Za-z][\w-]*)$/.exec(path);
  if (ext) {
    const [, urn = '', attr = ''] = ext;
    const cur = resource[urn];
    const o: Record<string, unknown> = isObject(cur) ? { ...cur } : {};
    if (remove) delete o[attr];
    else o[attr] = value;
    resource[urn] = o;
    return;
  }
  const m = /^([A-Za-z][\w-]*)(?:\[\s*(\w+)\s+eq\s+"([^"]*)"\s*\])?(?:\.([A-Za-z][\w-]*))?$/.exec(path);
  if (!m) throw scimError(400, `unsupported path '${path}'`, 'invalidPath');
  const [, attr = '', key, match, sub] = m;
  const cur = resource[attr];
  if (key) {
    const list: unknown[] = Array.isArray(cur) ? [...cur] : [];
    let i = list.findIndex((e) => isObject(e) && e[key] === match);
    if (remove) {
      if (i >= 0) list.splice(i, 1);
    } else {
      if (i < 0) i = list.push({ [key]: match }) - 1;
      const e = list[i];
      list[i] = sub ? { ...(isObject(e) ? e : {}), [sub]: value } : value;
    }
    resource[attr] = list;
  } else if (sub) {
    const o: Record<string, unknown> = isObject(cur) ? { ...cur } : {};
    if (remove) delete o[sub];
    else o[sub] = value;
    resource[attr] = o;
  } else if (remove) delete resource[attr];
  else resource[attr] = value;
};

export const patchUser = async (w: Write, scope: ScimScope, id: string, body: unknown): Promise<ScimUserRow> => {
  const ops: PatchOperation[] = patchOperations(body);
  const old = await findUser(w.tx, scope, id, true);
  const f: UserFields = {
    userName: old.userName,
    active: old.active,
    externalId: old.externalId,
    displayName: old.displayName,
    resource: { ...old.resource },
  };
  const apply = (path: string, value: unknown, remove: boolean) => {
    const name = path.toLowerCase();
    if (name === 'active') f.active = remove ? false : boolOf(value, 'active');
    else if (name === 'username') f.userName = text(value, 'userName', 255);
    else if (name === 'externalid') f.externalId = remove ? null : optText(value, 'externalId');
    else if (name === 'displayname') f.displayName = remove ? null : optText(value, 'displayName');
    else if (name === 'id' || name === 'schemas' || name === 'meta' || name === 'password') return;
    else setPath(f.resource, path, value, remove);
  };
  for (const o of ops) {
    if (o.path) apply(o.path, o.value, o.op === 'remove');
    else if (o.op !== 'remove' && isObject(o.value)) for (const [k, v] of Object.entries(o.value)) apply(k, v, false);
    else throw scimError(400, `a '${o.op}' without a path needs an object value`, o.op === 'remove' ? 'noTarget' : 'invalidValue');
  }
  return store(w, scope, old, f);
};

export const deleteUser = async ({ tx, change }: Write, scope: ScimScope, id: string): Promise<void> => {
  const old = await findUser(tx, scope, id, true);
  // Out of every group first, then the identity's memberships and tokens go.
  await tx
    .update(scimGroups)
    .set({ members: sql`${scimGroups.members} - ${old.id}`, updatedAt: new Date() })
    .where(and(eq(scimGroups.customerUuid, scope.customerUuid), sql`${scimGroups.members} ? ${old.id}`));
  await tx.delete(scimUsers).where(eq(scimUsers.id, old.id));
  await syncMemberships(tx, change, scope, [{ id: old.id, userName: old.userName, active: false }]);
};
