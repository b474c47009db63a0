import { and, desc, eq, gt, inArray, isNotNull, isNull, max, or } from 'drizzle-orm';
import { ENTITIES_KEEPING_API_KEYS, RESOURCES } from '../api/resources.ts';
import { hostOfUrl } from '../core/hosts.ts';
import type { SecretBox } from '../core/secrets.ts';
import type { Db } from '../store/db.ts';
import {
  apiKeys,
  configChanges,
  customers,
  dataplanes,
  projectGatewayProjects,
  projectGateways,
  projects,
  signingKeys,
  userTokens,
} from '../store/schema/index.ts';
import { pgliteTxExec } from '../store/pglite.ts';
import type { ConfigDocument, DocumentSections } from '../api/config-document.ts';
import { batchedSelect, type DocumentScope, type LoadContext, liveProjects, type Tx } from './loader.ts';
import { loadSections } from './sections/index.ts';

/** The newest configuration revision (the highest change-record id; 0 before any change). */
export const currentRevision = async (db: Db): Promise<number> => {
  const [row] = await db.select({ rev: max(configChanges.id) }).from(configChanges);
  return Number(row?.rev ?? 0);
};

export interface LoadOptions {
  /** false (tests): the selects one by one instead of in one round trip on PGlite. */
  batched?: boolean;
  /**
   * The document this reader loaded last (unscoped loads only): its API keys are kept and only
   * the keys changed since its revision are read, when every change since then allows it
   * (`keysSince`). Periodic full syncs load without it.
   */
  previous?: ConfigDocument;
}

/** More changes than this since the previous document: read every key (one select is then cheaper). */
const MAX_FOLLOWED_CHANGES = 500;
const NO_ID = '00000000-0000-0000-0000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type KeyDoc = ConfigDocument['apiKeys'][number];

/**
 * The ids of the API keys changed since `previous` (every write to api_keys records an `api_key`
 * change with the key's id, or a project/customer change for a cascade), or undefined when every
 * key must be read. Change ids follow commit order (the mutation path's ordering lock), so the
 * changes after the previous revision are exactly the ones it did not see.
 */
const keysSince = async (tx: Tx, previous: ConfigDocument | undefined, revision: number): Promise<string[] | undefined> => {
  if (!previous || previous.revision > revision) return undefined;
  if (previous.revision === revision) return [];
  const rows = await tx
    .select({ entity: configChanges.entity, entityId: configChanges.entityId })
    .from(configChanges)
    .where(gt(configChanges.id, previous.revision))
    .limit(MAX_FOLLOWED_CHANGES + 1);
  if (rows.length > MAX_FOLLOWED_CHANGES) return undefined;
  const changed = new Set<string>();
  for (const r of rows) {
    if (r.entity === RESOURCES.apiKey.entity && UUID.test(r.entityId)) changed.add(r.entityId);
    else if (!ENTITIES_KEEPING_API_KEYS.has(r.entity)) return undefined;
  }
  return [...changed];
};

/** The previous document's keys without the changed and the expired ones, then the changed keys as read now. */
const mergeKeys = (previous: readonly KeyDoc[], changed: readonly string[], read: readonly KeyDoc[], now: Date): KeyDoc[] => {
  const gone = new Set(changed);
  const t = now.getTime();
  const kept = previous.filter((k) => !gone.has(k.id) && (k.expiresAt === null || Date.parse(k.expiresAt) > t));
  return [...kept, ...read];
};

type LoadedSections = Awaited<ReturnType<typeof loadSections>>;
// Every declared section has a loader and every loader fills a declared section (a compile error names the one astray).
({}) satisfies Record<Exclude<keyof DocumentSections, keyof LoadedSections>, never>;
({}) satisfies Record<Exclude<keyof LoadedSections, keyof DocumentSections>, never>;

/**
 * Reads everything a data plane serves from the store, in one transaction: the declared sections
 * by their loaders (src/propagation/sections/*, started together so that every select travels in
 * one batch) and the sections that are not one resource's rows (api/config-document.ts) here.
 * Project-owned rows are joined to their project by row id, and only rows of live projects of live
 * customers are read (a stray row of a deleted tenant never reaches a snapshot).
 * `upstreamAllowPrivate` (GATEWAY_UPSTREAM_ALLOW_PRIVATE) lets every connection reach private
 * addresses.
 */
export const loadConfigDocument = async (
  db: Db,
  secrets: SecretBox,
  upstreamAllowPrivate = false,
  scope?: DocumentScope,
  opts: LoadOptions = {},
): Promise<ConfigDocument> =>
  db.transaction(async (tx) => {
    // On PGlite the selects go in one round trip (store/pglite-select.ts); `batched: false` (tests) reads them one by one.
    const exec = opts.batched === false ? undefined : pgliteTxExec(tx);
    const [revRow] = await tx.select({ rev: max(configChanges.id) }).from(configChanges);
    const revision = Number(revRow?.rev ?? 0);
    const previous = scope ? undefined : opts.previous;
    const changedKeys = await keysSince(tx, previous, revision);
    const now = new Date();
    const live = liveProjects(tx, scope);
    const ctx: LoadContext = { tx, secrets, upstreamAllowPrivate, scope, now, live, select: batchedSelect(exec) };
    // Both start in this tick: their selects share one batch.
    const sections = loadSections(ctx);
    const own = ctx.select([
      tx
        .select({ id: projects.id, customerUuid: projects.customerUuid, customerId: projects.customerId, projectId: projects.projectId })
        .from(projects)
        .where(inArray(projects.id, live())),
      tx
        .select({
          id: apiKeys.id,
          projectUuid: apiKeys.projectUuid,
          keyHash: apiKeys.keyHash,
          customerId: apiKeys.customerId,
          projectId: apiKeys.projectId,
          expiresAt: apiKeys.expiresAt,
        })
        .from(apiKeys)
        .where(
          and(
            changedKeys ? inArray(apiKeys.id, changedKeys.length > 0 ? changedKeys : [NO_ID]) : undefined,
            isNull(apiKeys.revokedAt),
            or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
            inArray(apiKeys.projectUuid, live()),
          ),
        ),
      tx
        .select({ kid: signingKeys.kid, publicKeyPem: signingKeys.publicKeyPem })
        .from(signingKeys)
        .where(eq(signingKeys.purpose, 'user_token')),
      tx
        .select({ jti: userTokens.jti })
        .from(userTokens)
        .where(
          and(
            isNotNull(userTokens.revokedAt),
            gt(userTokens.expiresAt, now),
            scope ? eq(userTokens.customerUuid, scope.customerUuid) : undefined,
          ),
        ),
    ]);
    const [[projectRows, keyRows, signingRows, revokedRows], declared] = await Promise.all([own, sections]);
    const hosting = await hostingOf(tx, new Set(projectRows.map((p) => p.id)), scope);
    const keyDocs: KeyDoc[] = keyRows.map((k) => ({ ...k, expiresAt: k.expiresAt ? k.expiresAt.toISOString() : null }));
    return {
      revision,
      projects: projectRows,
      apiKeys: previous && changedKeys ? mergeKeys(previous.apiKeys, changedKeys, keyDocs, now) : keyDocs,
      userTokenKeys: signingRows,
      revokedTokenIds: revokedRows.map((r) => r.jti),
      ...declared,
      ...hosting,
      ...(scope?.workspace
        ? { self: { workspaceUuid: scope.workspace.id, workspaceId: scope.workspace.slug, projectUuid: scope.workspace.projectUuid } }
        : {}),
    };
  });

/**
 * What requests are matched against by `Host` (contract §5): project gateways with a URL and their
 * live attached projects, and the URL each workspace adopted through its newest PROXY_URL event
 * (SetWorkspaceURL with triggerUpdate; a URL set without it is stored but not acted on). Scoped to
 * one workspace for a separate data plane.
 */
const hostingOf = async (
  tx: Tx,
  live: ReadonlySet<string>,
  scope: DocumentScope | undefined,
): Promise<Pick<ConfigDocument, 'projectGateways' | 'workspaceUrls'>> => {
  const ws = scope?.workspace;
  if (scope && !ws) return { projectGateways: [], workspaceUrls: [] };
  const gatewayRows = await tx
    .select({
      id: projectGateways.id,
      customerUuid: projectGateways.customerUuid,
      workspaceId: projectGateways.workspaceId,
      projectGatewayId: projectGateways.projectGatewayId,
      url: projectGateways.url,
    })
    .from(projectGateways)
    .innerJoin(customers, eq(customers.id, projectGateways.customerUuid))
    .where(
      and(
        isNull(projectGateways.deletedAt),
        isNull(customers.deletedAt),
        isNotNull(projectGateways.urlHost),
        ws && scope ? and(eq(projectGateways.customerUuid, scope.customerUuid), eq(projectGateways.workspaceId, ws.slug)) : undefined,
      ),
    );
  const attached =
    gatewayRows.length === 0
      ? []
      : await tx
          .select({ gatewayId: projectGatewayProjects.gatewayId, projectUuid: projectGatewayProjects.projectUuid })
          .from(projectGatewayProjects)
          .where(
            inArray(
              projectGatewayProjects.gatewayId,
              gatewayRows.map((g) => g.id),
            ),
          );
  const gateways = gatewayRows.flatMap((g) => {
    const host = g.url ? hostOfUrl(g.url) : undefined;
    if (!host) return [];
    const projectUuids = attached.filter((a) => a.gatewayId === g.id && live.has(a.projectUuid)).map((a) => a.projectUuid);
    return [
      { id: g.id, customerUuid: g.customerUuid, workspaceId: g.workspaceId, projectGatewayId: g.projectGatewayId, host, projectUuids },
    ];
  });
  const planes = await tx
    .select({ id: dataplanes.id, customerUuid: dataplanes.customerUuid, slug: dataplanes.slug, projectUuid: dataplanes.projectUuid })
    .from(dataplanes)
    .innerJoin(customers, eq(customers.id, dataplanes.customerUuid))
    .where(and(isNull(dataplanes.deletedAt), isNull(customers.deletedAt), ws ? eq(dataplanes.id, ws.id) : undefined));
  const events =
    planes.length === 0
      ? []
      : await tx
          .selectDistinctOn([configChanges.target], { target: configChanges.target, payload: configChanges.payload })
          .from(configChanges)
          .where(
            and(
              inArray(
                configChanges.target,
                planes.map((p) => p.id),
              ),
              eq(configChanges.kind, 'PROXY_URL'),
            ),
          )
          .orderBy(configChanges.target, desc(configChanges.id));
  const urlOf = new Map(events.map((e) => [e.target, typeof e.payload.url === 'string' ? e.payload.url : undefined]));
  const workspaceUrls = planes.flatMap((p) => {
    const url = urlOf.get(p.id);
    const host = url ? hostOfUrl(url) : undefined;
    return url && host ? [{ id: p.id, customerUuid: p.customerUuid, workspaceId: p.slug, projectUuid: p.projectUuid, url, host }] : [];
  });
  return { projectGateways: gateways, workspaceUrls };
};
