import { and, eq, isNull } from 'drizzle-orm';
import { asGatewayError, databaseUnavailable, GatewayError, isDatabaseUnavailable } from '../../core/errors.ts';
import { sha256Hex } from '../../core/ids.ts';
import { describeError, log } from '../../core/log.ts';
import { customers, scimTokens } from '../../store/schema/index.ts';
import { type Actor, callInfo, type ServerLike } from '../audit-record.ts';
import { bearer } from '../auth.ts';
import type { ControlDeps } from '../deps.ts';
import { callerMutation } from '../mutation.ts';
import { createGroup, deleteGroup, findGroup, groupView, listGroups, patchGroup, replaceGroup, withMembers } from './groups.ts';
import { CONTENT_TYPE, errorBody, GROUP_SCHEMA, isObject, listBody, scimError, scimJson, USER_SCHEMA } from './protocol.ts';
import { createUser, deleteUser, findUser, listUsers, patchUser, replaceUser, type ScimScope, userView } from './users.ts';

/**
 * The SCIM 2.0 endpoint (RFC 7644) on the management listener at `/scim/v2/`: bearer = a SCIM
 * token (CreateScimToken), which names the customer every resource belongs to. Writes run on the
 * mutation path (one transaction with the change rows and an audit entry whose actor is the
 * token); errors are the RFC's bodies (`application/scim+json`).
 */

export const SCIM_PREFIX = '/scim/v2';

const SERVICE_PROVIDER_CONFIG = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
  documentationUri: 'https://github.com/ai-gateway/docs/sso.md',
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: 200 },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [
    { type: 'oauthbearertoken', name: 'OAuth Bearer Token', description: 'a SCIM token from CreateScimToken', primary: true },
  ],
};

const RESOURCE_TYPES = [
  { schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'], id: 'User', name: 'User', endpoint: '/Users', schema: USER_SCHEMA },
  {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id: 'Group',
    name: 'Group',
    endpoint: '/Groups',
    schema: GROUP_SCHEMA,
  },
];

const authenticate = async (deps: ControlDeps, request: Request): Promise<{ scope: Omit<ScimScope, 'base'>; tokenId: string }> => {
  const token = bearer(request);
  if (!token) throw scimError(401, 'missing credentials: send "Authorization: Bearer <SCIM token>"');
  const [row] = await deps.db
    .select({ id: scimTokens.id, customerUuid: scimTokens.customerUuid, customerId: customers.customerId })
    .from(scimTokens)
    .innerJoin(customers, and(eq(customers.id, scimTokens.customerUuid), isNull(customers.deletedAt)))
    .where(and(eq(scimTokens.tokenHash, sha256Hex(token)), isNull(scimTokens.revokedAt)))
    .limit(1);
  if (!row) throw scimError(401, 'invalid credentials');
  await deps.db.update(scimTokens).set({ lastUsedAt: new Date() }).where(eq(scimTokens.id, row.id));
  return { scope: { customerUuid: row.customerUuid, customerId: row.customerId }, tokenId: row.id };
};

const bodyOf = async (request: Request): Promise<unknown> => {
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch {
    throw scimError(400, 'the body is not JSON', 'invalidSyntax');
  }
};

/** `publicUrl` (GATEWAY_PUBLIC_URL): the origin `meta.location` and `Location` name; unset, the request's own. */
export const scimHandler =
  (deps: ControlDeps, publicUrl?: string) =>
  async (request: Request, server?: ServerLike | null): Promise<Response> => {
    try {
      const url = new URL(request.url);
      const [kind = '', id, ...rest] = url.pathname
        .slice(SCIM_PREFIX.length + 1)
        .split('/')
        .map(decodeURIComponent);
      if (rest.length > 0) throw scimError(404, 'unknown SCIM endpoint');
      const { scope: s, tokenId } = await authenticate(deps, request);
      const scope: ScimScope = { ...s, base: `${publicUrl ?? url.origin}${SCIM_PREFIX}` };
      const method = request.method.toUpperCase();
      if (method === 'GET' && !id) {
        if (kind === 'ServiceProviderConfig') return scimJson(200, SERVICE_PROVIDER_CONFIG);
        if (kind === 'ResourceTypes') return scimJson(200, listBody(RESOURCE_TYPES, RESOURCE_TYPES.length, 1));
      }
      if (kind !== 'Users' && kind !== 'Groups') throw scimError(404, `unknown SCIM endpoint '${kind}'`);
      const users = kind === 'Users';
      if (method === 'GET')
        return scimJson(
          200,
          !id
            ? users
              ? await listUsers(deps.db, scope, url)
              : await listGroups(deps.db, scope, url)
            : users
              ? userView(await findUser(deps.db, scope, id), scope.base)
              : await groupView(deps.db, await findGroup(deps.db, scope, id), scope.base, withMembers(url)),
        );
      const action = method === 'POST' ? 'CREATE' : method === 'DELETE' ? 'DELETE' : 'UPDATE';
      if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) || (method === 'POST') !== !id)
        throw scimError(method === 'POST' ? 404 : 400, `${method} is not supported on this SCIM path`);
      if (method !== 'DELETE' && !/json/i.test(request.headers.get('content-type') ?? ''))
        throw scimError(400, `send the body as ${CONTENT_TYPE} (or application/json)`, 'invalidSyntax');
      const body = method === 'DELETE' ? {} : await bodyOf(request);
      if (method !== 'DELETE' && !isObject(body)) throw scimError(400, 'the body must be a JSON object', 'invalidSyntax');
      const actor: Actor = {
        actorType: 'user',
        userId: `scim-token:${tokenId}`,
        userEmail: '',
        facts: { principal: 'scim_token', customerId: scope.customerId },
      };
      const target = { actionType: action, resourceType: users ? ('scim_user' as const) : ('scim_group' as const), resourceId: id ?? '' };
      const result = await callerMutation(deps, { call: callInfo(request, server), actor, target, body }, async (w) => {
        if (users) {
          if (method === 'DELETE') {
            await deleteUser(w, scope, id ?? '');
            return { result: {}, resourceId: id ?? '' };
          }
          const row =
            method === 'POST'
              ? await createUser(w, scope, body)
              : method === 'PUT'
                ? await replaceUser(w, scope, id ?? '', body)
                : await patchUser(w, scope, id ?? '', body);
          return { result: userView(row, scope.base), resourceId: row.id };
        }
        if (method === 'DELETE') {
          await deleteGroup(w, scope, id ?? '');
          return { result: {}, resourceId: id ?? '' };
        }
        const row =
          method === 'POST'
            ? await createGroup(w, scope, body)
            : method === 'PUT'
              ? await replaceGroup(w, scope, id ?? '', body)
              : await patchGroup(w, scope, id ?? '', body);
        return { result: await groupView(w.tx, row, scope.base), resourceId: row.id };
      });
      if (method === 'DELETE') return new Response(null, { status: 204 });
      const location = isObject(result) && isObject(result.meta) && typeof result.meta.location === 'string' ? result.meta.location : '';
      return scimJson(method === 'POST' ? 201 : 200, result, method === 'POST' && location ? { location } : {});
    } catch (e) {
      if (e instanceof GatewayError) return errorBody(e);
      if (isDatabaseUnavailable(e)) return errorBody(databaseUnavailable());
      log.every('scim-failed', 'error', 'SCIM request failed', { error: describeError(e) }, 5_000);
      return errorBody(asGatewayError(e));
    }
  };
