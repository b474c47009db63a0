import { and, asc, eq, inArray, isNull, ne } from 'drizzle-orm';
import { connectError } from '../../core/errors.ts';
import { aiModels, type ProjectGatewayRow, projectGatewayProjects, projectGateways, projectModels } from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import type { Scope } from '../connect.ts';
import type { ControlDeps, Reader, Tx } from '../deps.ts';

/**
 * The rules of project gateways: URL hosts, the projects a gateway serves, and the non-fatal
 * advisories (`warnings`) returned by Attach, SetURL and SetWorkspace.
 */

/** The lower-cased host of a gateway URL (a full URL, or a bare hostname with optional port/path). */
export const hostOf = (url: string, field = 'url'): string => {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`;
  let host = '';
  try {
    const u = new URL(withScheme);
    if (u.protocol === 'https:' || u.protocol === 'http:') host = u.hostname.toLowerCase();
  } catch {
    host = '';
  }
  if (!host) throw connectError('invalid_argument', `invalid field '${field}': not a URL or hostname`, field);
  return host;
};

export const findGateway = async (db: Reader, id: string): Promise<ProjectGatewayRow> => {
  const [row] = await db
    .select()
    .from(projectGateways)
    .where(and(eq(projectGateways.id, id), isNull(projectGateways.deletedAt)))
    .limit(1);
  if (!row) throw connectError('not_found', `project gateway '${id}' not found`, 'id');
  return row;
};

/** The live gateway `id`, locked until the transaction ends (share: attach; update: delete). */
export const lockGateway = async (tx: Tx, id: string, mode: 'share' | 'update'): Promise<ProjectGatewayRow> => {
  const [row] = await tx
    .select()
    .from(projectGateways)
    .where(and(eq(projectGateways.id, id), isNull(projectGateways.deletedAt)))
    .limit(1)
    .for(mode);
  if (!row) throw connectError('not_found', `project gateway '${id}' not found`, 'id');
  return row;
};

/** Projects a gateway serves, in attachment order. */
export const attachedProjects = async (db: Reader, gatewayId: string): Promise<string[]> =>
  (
    await db
      .select({ projectId: projectGatewayProjects.projectId })
      .from(projectGatewayProjects)
      .where(eq(projectGatewayProjects.gatewayId, gatewayId))
      .orderBy(asc(projectGatewayProjects.createdAt), asc(projectGatewayProjects.projectId))
  ).map((r) => r.projectId);

/** Attached projects of many gateways at once (list pages). */
export const attachedProjectsOf = async (db: Reader, gatewayIds: readonly string[]): Promise<Map<string, string[]>> => {
  const out = new Map<string, string[]>(gatewayIds.map((id) => [id, []]));
  if (gatewayIds.length === 0) return out;
  const rows = await db
    .select({ gatewayId: projectGatewayProjects.gatewayId, projectId: projectGatewayProjects.projectId })
    .from(projectGatewayProjects)
    .where(inArray(projectGatewayProjects.gatewayId, [...gatewayIds]))
    .orderBy(asc(projectGatewayProjects.createdAt), asc(projectGatewayProjects.projectId));
  for (const r of rows) out.get(r.gatewayId)?.push(r.projectId);
  return out;
};

/** `already_exists` when another active gateway is bound to the host. */
export const assertHostFree = async (db: Reader, host: string, selfId: string | undefined, field = 'url'): Promise<void> => {
  const [other] = await db
    .select({ id: projectGateways.id })
    .from(projectGateways)
    .where(and(eq(projectGateways.urlHost, host), isNull(projectGateways.deletedAt), selfId ? ne(projectGateways.id, selfId) : undefined))
    .limit(1);
  if (other) throw connectError('already_exists', `the URL host '${host}' is bound to another project gateway`, field);
};

/** Of the given projects, those without an assigned (non-deleted) catalog model. */
export const projectsWithoutModels = async (db: Reader, customerId: string, projectIds: readonly string[]): Promise<string[]> => {
  if (projectIds.length === 0) return [];
  const rows = await db
    .selectDistinct({ projectId: projectModels.projectId })
    .from(projectModels)
    .innerJoin(aiModels, and(eq(aiModels.id, projectModels.modelId), isNull(aiModels.deletedAt)))
    .where(and(eq(projectModels.customerId, customerId), inArray(projectModels.projectId, [...projectIds])));
  const withModels = new Set(rows.map((r) => r.projectId));
  return projectIds.filter((p) => !withModels.has(p));
};

export const WARN = {
  noModels: (projectId: string) =>
    `project '${projectId}' has no assigned models: the gateway serves an empty route map for it and answers 404`,
  noProjects: () => 'no project is attached: the gateway serves an empty route map and answers 404 until a project is attached',
  noUrl: () => 'no URL is set: clients cannot reach the gateway until SetProjectGatewayURL',
  repoint: (host: string | null, workspaceId: string) =>
    `the hostname ${host ? `'${host}' ` : ''}is unchanged: repoint DNS and the TLS certificate to the ingress of data plane '${workspaceId}', or traffic gets 404 on the old data plane until cutover`,
};

/** Advisories about what the gateway serves: no attached project, or attached projects without models. */
export const servingWarnings = async (db: Reader, gw: ProjectGatewayRow, projects: readonly string[]): Promise<string[]> => {
  if (projects.length === 0) return [WARN.noProjects()];
  return (await projectsWithoutModels(db, gw.customerId, projects)).map(WARN.noModels);
};

/**
 * Owner scope: a project owner (not a platform admin, for whom this is never called) passes
 * `projectId`, the project it owns; the gateway must serve it.
 */
export const ownerScope =
  (deps: ControlDeps) =>
  async (i: { id: string; projectId?: string }): Promise<Scope> => {
    const gw = await findGateway(deps.db, i.id);
    if (!i.projectId)
      throw connectError(
        'permission_denied',
        'a project owner must pass projectId: a project it owns that this gateway serves',
        'projectId',
      );
    if (!(await attachedProjects(deps.db, gw.id)).includes(i.projectId))
      throw connectError(
        'permission_denied',
        `project gateway '${gw.projectGatewayId}' does not serve project '${i.projectId}'`,
        'projectId',
      );
    return { customerId: gw.customerId, customerUuid: gw.customerUuid, projectId: i.projectId };
  };

/** The projects a user token may see (undefined: all, for platform admins). */
export const visibleTo = (p: Principal): string[] | undefined => (p.kind === 'user' ? [...p.roles.keys()] : undefined);
