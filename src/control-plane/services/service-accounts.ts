import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importSPKI } from 'jose';
import { jcs } from '../../core/jcs.ts';
import { connectError } from '../../core/errors.ts';
import { randomToken, sha256Hex } from '../../core/ids.ts';
import { customers, dataplanes, serviceAccounts, type ServiceAccountRow, type StoredTelemetry } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { lockCustomer } from '../lookups.ts';
import { mutation, type MutationCtx } from '../mutation.ts';
import { Int64, int64Value, Nullable, OptTimestamp, PATTERNS, Str, StringMap, Timestamp, ts, Uuid } from '../schemas.ts';
import { checkSecretRef, isSecretRef, resolveSecretRef, storeSecret } from '../secret-refs.ts';
import { accountStatus } from '../service-account-auth.ts';

/** validityDays when unset (docs/operating.md, "Service accounts"). */
export const DEFAULT_VALIDITY_DAYS = 365;
export const DEFAULT_AUDIENCE = 'ai-gateway';
/** Scopes when none are given: the data plane protocol only. */
export const DEFAULT_SCOPES = ['dataplane'];

const Uri = (description: string) => Nullable(Str(1, 2048, { pattern: '^https?://', description: `${description} (http(s) URI, max 2048)` }));
const Reason = () => t.Optional(t.Union([Str(0, 500), t.Null()], { description: 'kept in the audit trail (0-500)' }));

const PublicKey = t.Object({ alg: t.String(), key: t.String({ description: 'SPKI PEM' }), kid: t.String(), use: t.String() });
const Telemetry = t.Object({
  endpoint: t.String(),
  headers: t.Record(t.String(), t.String()),
  insecure: t.Boolean(),
  protocol: t.String(),
  timeout: t.String(),
  localVars: t.Record(t.String(), t.String({ description: 'internal secret reference' })),
});
const ServiceAccount = t.Object({
  id: t.String(),
  type: t.Literal('service_account'),
  customerId: t.String(),
  workspaceId: t.String(),
  clientEmail: t.String(),
  privateKey: t.String({ description: 'PEM (PKCS#8) RSA private key: returned only here, never stored' }),
  privateKeyId: t.String(),
  apiUri: t.String(),
  serveUrl: t.String(),
  scopes: t.Array(t.String()),
  authServer: t.Object({ audience: t.String(), issuer: t.String(), jwksUri: t.String(), publicKeys: t.Array(PublicKey) }),
  gatekeeper: t.Object({
    audience: t.String(),
    issuer: t.String(),
    publicKeys: t.Array(PublicKey),
    router: t.Optional(t.Object({ url: t.String(), key: t.String({ description: 'secret reference' }) })),
  }),
  dataExports: t.Object({ telemetry: Telemetry }),
  internalApiKey: t.Optional(t.String({ description: 'secret reference' })),
  createdAt: Timestamp(),
  expiresAt: Timestamp(),
});
const ServiceAccountInfo = t.Object({
  id: t.String(),
  customerId: t.String(),
  workspaceId: t.String(),
  email: t.String(),
  status: t.String({ description: 'SERVICE_ACCOUNT_STATUS_ACTIVE, _REVOKED or _EXPIRED' }),
  createdAt: Timestamp(),
  expiresAt: Timestamp(),
  lastUsedAt: OptTimestamp('absent until first used (written in batches, within seconds)'),
  revokedAt: OptTimestamp(),
  publicKeyFingerprint: t.String({ description: 'RFC 7638 JWK thumbprint (SHA-256) of the public key' }),
  metadata: t.Record(t.String(), t.String()),
});

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
  if (!ws || ws.createdAt.getTime() > row.createdAt.getTime()) throw connectError('failed_precondition', `the service account's workspace '${row.workspaceId}' was deleted`, 'id');
};

const publicKeyOf = (a: Pick<ServiceAccountRow, 'kid' | 'publicKeyPem'>) => ({ alg: 'RS256', key: a.publicKeyPem, kid: a.kid, use: 'sig' });

export const serviceAccountOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'service_account',
    resourceId: (_i, o) => o?.serviceAccount.id,
    service: 'admin.v1.AdminService',
    group: 'Service accounts',
    name: 'CreateServiceAccount',
    summary: 'Create a service account: an RSA key pair (private key returned once), the identity of a data plane or of automation',
    notes:
      "The private key is generated on the server, returned only in this response and never stored. checksum = sha256 (hex) over the RFC 8785 canonical JSON of the returned serviceAccount. validityDays defaults to 365. scopes default to ['dataplane']: `dataplane` may pull configuration and push records for its workspace; `read`/`admin` may call the management API as a member/admin of every project of the customer. routerKey and telemetryLocalVars values may be plaintext (stored wrapped, replaced by `secret://internal/<uuid>`) or a secret reference (`secret://internal/<uuid>`, `secret://env/<NAME>`); internalApiKey must be a reference with PostgreSQL, plaintext is accepted with the embedded store. The workspace must exist.",
    permission: 'platform_admin',
    input: t.Object(
      {
        customerId: Str(1, 63, { pattern: PATTERNS.SLUG, description: 'customer slug (SLUG, 1-63)' }),
        workspaceId: Str(1, 253, { pattern: PATTERNS.ID, description: 'workspace (data plane) slug (ID, 1-253)' }),
        apiUri: Uri('management-plane API base URI; default: the URI this call was made to'),
        audience: Nullable(Str(1, 253, { pattern: PATTERNS.ID, description: "expected aud (max 253, ^[a-zA-Z0-9._-]+$); default 'ai-gateway'" })),
        issuer: Uri('expected iss; default: the account’s clientEmail as a mailto: URI'),
        jwksUri: Uri('default: {apiUri}/.well-known/jwks.json'),
        serveUrl: Uri('customer-facing data plane serve URL'),
        scopes: t.Optional(t.Array(Str(0, 50, { pattern: PATTERNS.SCOPE }), { maxItems: 10, description: "at most 10, each SCOPE, max 50; default ['dataplane']" })),
        validityDays: t.Optional(t.Union([Int64({ minimum: 1, maximum: 3650, description: 'int64 1..3650; default 365' }), t.Null()])),
        internalApiKey: Nullable(Str(1, 4096, { description: 'data plane → management plane key: a secret reference with PostgreSQL; plaintext allowed with the embedded store' })),
        routerUrl: Uri('router configuration to embed'),
        routerKey: Nullable(Str(1, 4096, { description: 'plaintext (stored wrapped, replaced by a reference) or a secret reference' })),
        telemetryEndpoint: Nullable(Str(0, 2048, { description: 'OTLP exporter endpoint' })),
        telemetryHeaders: t.Optional(StringMap('extra telemetry export headers')),
        telemetryInsecure: Nullable(t.Boolean()),
        telemetryLocalVars: t.Optional(StringMap('local telemetry environment overrides: plaintext or secret references, re-stored as internal references')),
        telemetryProtocol: Nullable(t.Union([t.Literal(''), t.Literal('grpc'), t.Literal('http/protobuf'), t.Literal('http/json')], { description: "'', grpc, http/protobuf or http/json" })),
        telemetryTimeout: Nullable(Str(0, 32, { pattern: '^[0-9]+(ns|us|ms|s|m|h)$', description: 'duration ^[0-9]+(ns|us|ms|s|m|h)$' })),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ serviceAccount: ServiceAccount, checksum: t.String(), checksumAlgorithm: t.String() }),
    handler: async (input, { tx, request }) => {
      const customer = await lockCustomer(tx, input.customerId);
      const [ws] = await tx
        .select({ id: dataplanes.id })
        .from(dataplanes)
        .where(and(eq(dataplanes.customerUuid, customer.id), eq(dataplanes.slug, input.workspaceId), isNull(dataplanes.deletedAt)))
        .limit(1)
        .for('share');
      if (!ws) throw connectError('not_found', `workspace '${input.workspaceId}' of customer '${input.customerId}' not found`, 'workspaceId');
      const cid = input.customerId;
      let internalApiKeyRef: string | null = null;
      if (input.internalApiKey) {
        if (isSecretRef(input.internalApiKey)) internalApiKeyRef = await checkSecretRef(tx, deps.secrets, cid, input.internalApiKey, 'internalApiKey');
        else if (deps.embeddedStore) internalApiKeyRef = await storeSecret(tx, deps.secrets, cid, 'internal_api_key', input.internalApiKey);
        else throw connectError('invalid_argument', 'internalApiKey: must be a secret reference (secret://internal/<uuid> or secret://env/<NAME>) with PostgreSQL', 'internalApiKey');
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
        dataExports: { telemetry: { endpoint: telemetry.endpoint ?? '', headers: telemetry.headers ?? {}, insecure: telemetry.insecure ?? false, protocol: telemetry.protocol ?? '', timeout: telemetry.timeout ?? '', localVars } },
        ...(internalApiKeyRef ? { internalApiKey: internalApiKeyRef } : {}),
        createdAt: ts(now),
        expiresAt: ts(expiresAt),
      };
      return { serviceAccount, checksum: sha256Hex(jcs(serviceAccount)), checksumAlgorithm: 'sha256' };
    },
  }),
  op({
    service: 'admin.v1.AdminService',
    group: 'Service accounts',
    name: 'GetServiceAccount',
    summary: 'A service account’s summary (status, expiry, last use, key fingerprint); never the private key',
    permission: 'customer_member',
    input: t.Object({ id: Uuid('service account id') }, { additionalProperties: false }),
    output: t.Object({ serviceAccount: ServiceAccountInfo }),
    scope: async (input) => {
      const a = await findAccount(deps, input.id);
      return { customerId: a.customerId, customerUuid: a.customerUuid };
    },
    handler: async (input) => ({ serviceAccount: infoOf(await findAccount(deps, input.id)) }),
  }),
  mutation(deps, {
    action: 'REVOKE',
    resource: 'service_account',
    resourceId: (i) => i.id,
    service: 'admin.v1.AdminService',
    group: 'Service accounts',
    name: 'RevokeServiceAccount',
    summary: 'Revoke a service account: its JWTs are refused at once (its data plane at its next pull)',
    notes: 'An ACTIVE or EXPIRED account may be revoked; revoking a REVOKED one is failed_precondition. The reason is kept in the audit entry.',
    permission: 'platform_admin',
    input: t.Object({ id: Uuid('service account id'), reason: Reason() }, { additionalProperties: false }),
    output: t.Object({ revokedAt: Timestamp(), success: t.Boolean() }),
    handler: async (input, { tx, change }) => {
      const [row] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, input.id)).limit(1).for('update');
      if (!row) throw connectError('not_found', `service account '${input.id}' not found`, 'id');
      if (row.revokedAt) throw connectError('failed_precondition', 'the service account is already revoked', 'id');
      const revokedAt = new Date();
      await tx.update(serviceAccounts).set({ revokedAt, revokeReason: input.reason ?? null }).where(eq(serviceAccounts.id, input.id));
      await accountChange(tx, row, change);
      return { revokedAt: ts(revokedAt), success: true };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'service_account',
    resourceId: (i) => i.id,
    service: 'admin.v1.AdminService',
    group: 'Service accounts',
    name: 'RestoreServiceAccount',
    summary: 'Restore a revoked service account (ACTIVE again unless past its expiry)',
    notes: 'Only a REVOKED account may be restored, and only while its customer and workspace exist (failed_precondition otherwise): an account revoked by their delete stays revoked. The reason is kept in the audit entry.',
    permission: 'platform_admin',
    input: t.Object({ id: Uuid('service account id'), reason: Reason() }, { additionalProperties: false }),
    output: t.Object({ serviceAccount: ServiceAccountInfo, success: t.Boolean() }),
    handler: async (input, { tx, change }) => {
      const [owner] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, input.id)).limit(1);
      if (!owner) throw connectError('not_found', `service account '${input.id}' not found`, 'id');
      // Parents first, as every delete locks them (customer, then its rows): a concurrent delete either
      // commits first (refused here) or waits for this restore and then revokes the account again.
      await lockOwners(tx, owner);
      const [row] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, input.id)).limit(1).for('update');
      if (!row) throw connectError('not_found', `service account '${input.id}' not found`, 'id');
      if (!row.revokedAt) throw connectError('failed_precondition', 'the service account is not revoked', 'id');
      const [updated] = await tx.update(serviceAccounts).set({ revokedAt: null, revokeReason: null }).where(eq(serviceAccounts.id, input.id)).returning();
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
    out.push({ ...(await exportJWK(await importSPKI(r.publicKeyPem, 'RS256', { extractable: true }))), kid: r.kid, alg: 'RS256', use: 'sig' });
  }
  return out;
};
