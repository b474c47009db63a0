import { and, eq, isNull } from 'drizzle-orm';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importSPKI } from 'jose';
import { int64Value, ts } from '../../api/kit.ts';
import { checkServiceAccountScopes, ServiceAccountOps } from '../../api/ops/service-accounts.ts';
import { jcs } from '../../core/jcs.ts';
import { connectError } from '../../core/errors.ts';
import { randomToken, sha256Hex } from '../../core/ids.ts';
import { customers, dataplanes, serviceAccounts, type ServiceAccountRow, type StoredTelemetry } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { lockCustomer } from '../lookups.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { mutation, type MutationCtx, rid } from '../mutation.ts';
import { checkSecretRef, isSecretRef, resolveSecretRef, storeSecret } from '../secret-refs.ts';
import { accountStatus } from '../service-account-auth.ts';

/** validityDays when unset (docs/security.md, "Service accounts"). */
export const DEFAULT_VALIDITY_DAYS = 365;
export const DEFAULT_AUDIENCE = 'ai-gateway';
/** Scopes when none are given: the data plane protocol only. */
export const DEFAULT_SCOPES = ['dataplane'];

const { CreateServiceAccount, GetServiceAccount, ListServiceAccounts, RevokeServiceAccount, RestoreServiceAccount } = ServiceAccountOps;

export const infoOf = (a: ServiceAccountRow) => ({
  id: a.id,
  customerId: a.customerId,
  workspaceId: a.workspaceId,
  email: a.clientEmail,
  status: `SERVICE_ACCOUNT_STATUS_${accountStatus(a)}`,
  createdAt: ts(a.createdAt),
  expiresAt: ts(a.expiresAt),
  ...(a.lastUsedAt ? { lastUsedAt: ts(a.lastUsedAt) } : {}),
  ...(a.revokedAt ? { revokedAt: ts(a.revokedAt) } : {}),
  publicKeyFingerprint: a.publicKeyFingerprint,
  metadata: a.metadata,
});

const findAccount = async (deps: ControlDeps, id: string): Promise<ServiceAccountRow> => {
  const [found] = await deps.db
    .select({ account: serviceAccounts, customerDeletedAt: customers.deletedAt })
    .from(serviceAccounts)
    .innerJoin(customers, eq(customers.id, serviceAccounts.customerUuid))
    .where(eq(serviceAccounts.id, id))
    .limit(1);
  if (!found) throw connectError('not_found', `service account '${id}' not found`, 'id');
  const { account, customerDeletedAt } = found;
  // An account its customer's delete did not revoke (deleted before deletes revoked accounts) reads as what it is.
  return customerDeletedAt && !account.revokedAt ? { ...account, revokedAt: customerDeletedAt, revokeReason: 'customer deleted' } : account;
};

/** Restoring needs the account's customer row and its workspace live (held FOR SHARE until the restore commits). */
const lockOwners = async (tx: Tx, row: ServiceAccountRow): Promise<void> => {
  const [customer] = await tx
    .select({ id: customers.id })
    .from(customers)
    .where(and(eq(customers.id, row.customerUuid), isNull(customers.deletedAt)))
    .for('share');
  if (!customer) throw connectError('failed_precondition', `the service account's customer '${row.customerId}' was deleted`, 'id');
  const [ws] = await tx
    .select({ id: dataplanes.id, createdAt: dataplanes.createdAt })
    .from(dataplanes)
    .where(and(eq(dataplanes.customerUuid, row.customerUuid), eq(dataplanes.slug, row.workspaceId), isNull(dataplanes.deletedAt)))
    .limit(1)
    .for('share');
  // A workspace created after the account is a re-created slug: not the account's workspace.
  if (!ws || ws.createdAt.getTime() > row.createdAt.getTime())
    throw connectError('failed_precondition', `the service account's workspace '${row.workspaceId}' was deleted`, 'id');
};

const publicKeyOf = (a: Pick<ServiceAccountRow, 'kid' | 'publicKeyPem'>) => ({ alg: 'RS256', key: a.publicKeyPem, kid: a.kid, use: 'sig' });

export const serviceAccountOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateServiceAccount, {
    resourceId: (_i, o) => o?.serviceAccount.id,
    handler: async (input, { tx, request }) => {
      checkServiceAccountScopes(input.scopes ?? []);
      const customer = await lockCustomer(tx, input.customerId);
      const [ws] = await tx
        .select({ id: dataplanes.id })
        .from(dataplanes)
        .where(and(eq(dataplanes.customerUuid, customer.id), eq(dataplanes.slug, input.workspaceId), isNull(dataplanes.deletedAt)))
        .limit(1)
        .for('share');
      if (!ws)
        throw connectError('not_found', `workspace '${input.workspaceId}' of customer '${input.customerId}' not found`, 'workspaceId');
      const cid = input.customerId;
      let internalApiKeyRef: string | null = null;
      if (input.internalApiKey) {
        if (isSecretRef(input.internalApiKey))
          internalApiKeyRef = await checkSecretRef(tx, deps.secrets, cid, input.internalApiKey, 'internalApiKey');
        else if (deps.embeddedStore) internalApiKeyRef = await storeSecret(tx, deps.secrets, cid, 'internal_api_key', input.internalApiKey);
        else
          throw connectError(
            'invalid_argument',
            'internalApiKey: must be a secret reference (secret://internal/<uuid> or secret://env/<NAME>) with PostgreSQL',
            'internalApiKey',
          );
      }
      let routerKeyRef: string | null = null;
      if (input.routerKey) {
        routerKeyRef = isSecretRef(input.routerKey)
          ? await checkSecretRef(tx, deps.secrets, cid, input.routerKey, 'routerKey')
          : await storeSecret(tx, deps.secrets, cid, 'router_key', input.routerKey);
      }
      const localVars: Record<string, string> = {};
      for (const [k, v] of Object.entries(input.telemetryLocalVars ?? {})) {
        const plain = isSecretRef(v) ? await resolveSecretRef(tx, deps.secrets, cid, v, `telemetryLocalVars.${k}`) : v;
        localVars[k] = await storeSecret(tx, deps.secrets, cid, 'telemetry_var', plain);
      }
      const pair = await generateKeyPair('RS256', { extractable: true });
      const privateKey = await exportPKCS8(pair.privateKey);
      const publicKeyPem = await exportSPKI(pair.publicKey);
      const fingerprint = await calculateJwkThumbprint(await exportJWK(pair.publicKey), 'sha256');
      const kid = `sa_${randomToken(20)}`;
      const clientEmail = `${input.workspaceId.toLowerCase()}-${randomToken(8).toLowerCase()}@${cid}.sa.ai-gateway`;
      const apiUri = (input.apiUri ?? new URL(request.url).origin).replace(/\/+$/, '');
      const audience = input.audience || DEFAULT_AUDIENCE;
      const issuer = input.issuer ?? `mailto:${clientEmail}`;
      const jwksUri = input.jwksUri ?? `${apiUri}/.well-known/jwks.json`;
      const days = input.validityDays == null ? DEFAULT_VALIDITY_DAYS : int64Value(input.validityDays);
      const now = new Date();
      const expiresAt = new Date(now.getTime() + days * 86_400_000);
      const telemetry: StoredTelemetry = {
        endpoint: input.telemetryEndpoint ?? '',
        headers: input.telemetryHeaders ?? {},
        insecure: input.telemetryInsecure ?? false,
        protocol: input.telemetryProtocol ?? '',
        timeout: input.telemetryTimeout ?? '',
        localVars,
      };
      const scopes = input.scopes && input.scopes.length > 0 ? input.scopes : DEFAULT_SCOPES;
      const [row] = await tx
        .insert(serviceAccounts)
        .values({
          customerUuid: customer.id,
          customerId: cid,
          workspaceId: input.workspaceId,
          clientEmail,
          kid,
          publicKeyPem,
          publicKeyFingerprint: fingerprint,
          apiUri,
          serveUrl: input.serveUrl ?? null,
          scopes,
          audience,
          issuer,
          jwksUri,
          routerUrl: input.routerUrl ?? null,
          routerKeyRef,
          internalApiKeyRef,
          telemetry,
          createdAt: now,
          expiresAt,
        })
        .returning();
      if (!row) throw new Error('service account not stored');
      const keys = [publicKeyOf(row)];
      const serviceAccount = {
        id: row.id,
        type: 'service_account' as const,
        customerId: cid,
        workspaceId: input.workspaceId,
        clientEmail,
        privateKey,
        privateKeyId: kid,
        apiUri,
        serveUrl: input.serveUrl ?? '',
        scopes,
        authServer: { audience, issuer, jwksUri, publicKeys: keys },
        gatekeeper: {
          audience,
          issuer,
          publicKeys: keys,
          ...(input.routerUrl && routerKeyRef ? { router: { url: input.routerUrl, key: routerKeyRef } } : {}),
        },
        dataExports: {
          telemetry: {
            endpoint: telemetry.endpoint ?? '',
            headers: telemetry.headers ?? {},
            insecure: telemetry.insecure ?? false,
            protocol: telemetry.protocol ?? '',
            timeout: telemetry.timeout ?? '',
            localVars,
          },
        },
        ...(internalApiKeyRef ? { internalApiKey: internalApiKeyRef } : {}),
        createdAt: ts(now),
        expiresAt: ts(expiresAt),
      };
      return { serviceAccount, checksum: sha256Hex(jcs(serviceAccount)), checksumAlgorithm: 'sha256' };
    },
  }),
  op(GetServiceAccount, {
    scope: async (input) => {
      if (typeof input.id !== 'string') return undefined;
      const a = await findAccount(deps, input.id);
      return { customerId: a.customerId, customerUuid: a.customerUuid };
    },
    handler: async (input) => ({ serviceAccount: infoOf(await findAccount(deps, input.id)) }),
  }),
  op(ListServiceAccounts, {
    scope: (i) => (typeof i.customerId === 'string' ? { customerId: i.customerId } : undefined),
    handler: async (input) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(serviceAccounts.createdAt, serviceAccounts.id, input.pageToken);
      // The live customer of that slug: a deleted customer's accounts are revoked with it.
      const rows = await deps.db
        .select({ account: serviceAccounts })
        .from(serviceAccounts)
        .innerJoin(customers, and(eq(customers.id, serviceAccounts.customerUuid), isNull(customers.deletedAt)))
        .where(
          and(
            eq(customers.customerId, input.customerId),
            input.workspaceId !== undefined ? eq(serviceAccounts.workspaceId, input.workspaceId) : undefined,
            input.includeRevoked ? undefined : isNull(serviceAccounts.revokedAt),
            k.where,
          ),
        )
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(
        rows.map((r) => r.account),
        size,
      );
      return { serviceAccounts: p.items.map(infoOf), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, RevokeServiceAccount, {
    resourceId: (i) => rid(i.id),
    handler: async (input, { tx, change }) => {
      const [row] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, input.id)).limit(1).for('update');
      if (!row) throw connectError('not_found', `service account '${input.id}' not found`, 'id');
      if (row.revokedAt) throw connectError('failed_precondition', 'the service account is already revoked', 'id');
      const revokedAt = new Date();
      await tx
        .update(serviceAccounts)
        .set({ revokedAt, revokeReason: input.reason ?? null })
        .where(eq(serviceAccounts.id, input.id));
      await accountChange(tx, row, change);
      return { revokedAt: ts(revokedAt), success: true };
    },
  }),
  mutation(deps, RestoreServiceAccount, {
    resourceId: (i) => rid(i.id),
    handler: async (input, { tx, change }) => {
      const [owner] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, input.id)).limit(1);
      if (!owner) throw connectError('not_found', `service account '${input.id}' not found`, 'id');
      // Parents first, as every delete locks them (customer, then its rows): a concurrent delete either
      // commits first (refused here) or waits for this restore and then revokes the account again.
      await lockOwners(tx, owner);
      const [row] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, input.id)).limit(1).for('update');
      if (!row) throw connectError('not_found', `service account '${input.id}' not found`, 'id');
      if (!row.revokedAt) throw connectError('failed_precondition', 'the service account is not revoked', 'id');
      const [updated] = await tx
        .update(serviceAccounts)
        .set({ revokedAt: null, revokeReason: null })
        .where(eq(serviceAccounts.id, input.id))
        .returning();
      if (!updated) throw new Error('service account not updated');
      await accountChange(tx, updated, change);
      return { serviceAccount: infoOf(updated), success: true };
    },
  }),
];

/**
 * A revocation or restore is a change for the account's data plane: its change record (and the
 * NOTIFY that goes with it) answers the data plane's held Pull at once, so it learns of it at once.
 */
const accountChange = async (tx: Tx, row: ServiceAccountRow, change: MutationCtx['change']): Promise<void> => {
  const [plane] = await tx
    .select({ id: dataplanes.id })
    .from(dataplanes)
    .where(and(eq(dataplanes.customerUuid, row.customerUuid), eq(dataplanes.slug, row.workspaceId), isNull(dataplanes.deletedAt)))
    .limit(1);
  if (plane) await change({ resource: 'serviceAccount' as const, entityId: row.id, customerId: row.customerId }, [plane.id]);
};

/** Public keys of the live service accounts of live customers, as JWKs (published at /.well-known/jwks.json). */
export const serviceAccountJwks = async (deps: Pick<ControlDeps, 'db'>): Promise<object[]> => {
  const rows = await deps.db
    .select({ kid: serviceAccounts.kid, publicKeyPem: serviceAccounts.publicKeyPem, expiresAt: serviceAccounts.expiresAt })
    .from(serviceAccounts)
    .innerJoin(customers, and(eq(customers.id, serviceAccounts.customerUuid), isNull(customers.deletedAt)))
    .where(isNull(serviceAccounts.revokedAt));
  const out: object[] = [];
  for (const r of rows) {
    if (r.expiresAt.getTime() <= Date.now()) continue;
    out.push({
      ...(await exportJWK(await importSPKI(r.publicKeyPem, 'RS256', { extractable: true }))),
      kid: r.kid,
      alg: 'RS256',
      use: 'sig',
    });
  }
  return out;
};
