import { Type as t } from '@sinclair/typebox';
import { Int64, Nullable, OptTimestamp, PATTERNS, Page, PageSize, PageToken, Str, StringMap, Timestamp, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';
import { connectError } from '../../core/errors.ts';
import { defineResource, reqList } from '../resource.ts';

/**
 * Service accounts (issue 13): an RSA key pair, the identity of a separate data plane or of
 * automation. The private key is returned once, by CreateServiceAccount, and never stored.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Service accounts';

const Uri = (description: string) =>
  Nullable(Str(1, 2048, { pattern: '^https?://', description: `${description} (http(s) URI, max 2048)` }));
const Reason = () => t.Optional(t.Union([Str(0, 500), t.Null()], { description: 'kept in the audit trail (0-500)' }));
const AccountId = () => Uuid('service account id');

/** What a service account's scopes grant (src/control-plane/service-account-auth.ts, dataplane-protocol.ts). */
export const SERVICE_ACCOUNT_SCOPES = ['dataplane', 'read', 'admin'] as const;

/** A scope that grants nothing is refused (the management API and the Terraform provider's plan-time check run this). */
export const checkServiceAccountScopes = (scopes: readonly string[]): void => {
  const unknown = scopes.find((s) => !SERVICE_ACCOUNT_SCOPES.some((k) => k === s));
  if (unknown !== undefined)
    throw connectError(
      'invalid_argument',
      `invalid field 'scopes': unknown scope '${unknown}'; one of: ${SERVICE_ACCOUNT_SCOPES.join(', ')}`,
      'scopes',
    );
};

const PublicKey = t.Object({ alg: t.String(), key: t.String({ description: 'SPKI PEM' }), kid: t.String(), use: t.String() });
const Telemetry = t.Object({
  endpoint: t.String(),
  headers: t.Record(t.String(), t.String()),
  insecure: t.Boolean(),
  protocol: t.String(),
  timeout: t.String(),
  localVars: t.Record(t.String(), t.String({ description: 'internal secret reference' })),
});

/** The CreateServiceAccount answer's account: what `serve --role data --service-account FILE` reads. */
export const ServiceAccountOut = t.Object({
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

export const ServiceAccountInfo = t.Object({
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

export const ServiceAccountOps = {
  CreateServiceAccount: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateServiceAccount',
    summary: 'Create a service account: an RSA key pair (private key returned once), the identity of a data plane or of automation',
    notes:
      "The private key is generated on the server, returned only in this response and never stored. checksum = sha256 (hex) over the RFC 8785 canonical JSON of the returned serviceAccount. validityDays defaults to 365. scopes default to ['dataplane']: `dataplane` may pull configuration and push records for its workspace; `read`/`admin` may call the management API as a member/admin of every project of the customer; any other scope is invalid_argument naming scopes. routerKey and telemetryLocalVars values may be plaintext (stored wrapped, replaced by `secret://internal/<uuid>`) or a secret reference (`secret://internal/<uuid>`, `secret://env/<NAME>`); internalApiKey must be a reference with PostgreSQL, plaintext is accepted with the embedded store. The workspace must exist.",
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'service_account' },
    input: t.Object(
      {
        customerId: Str(1, 63, { pattern: PATTERNS.SLUG, description: 'customer slug (SLUG, 1-63)' }),
        workspaceId: Str(1, 253, { pattern: PATTERNS.ID, description: 'workspace (data plane) slug (ID, 1-253)' }),
        apiUri: Uri('management-plane API base URI; default: the URI this call was made to'),
        audience: Nullable(
          Str(1, 253, { pattern: PATTERNS.ID, description: "expected aud (max 253, ^[a-zA-Z0-9._-]+$); default 'ai-gateway'" }),
        ),
        issuer: Uri('expected iss; default: the account’s clientEmail as a mailto: URI'),
        jwksUri: Uri('default: {apiUri}/.well-known/jwks.json'),
        serveUrl: Uri('customer-facing data plane serve URL'),
        scopes: t.Optional(
          t.Array(Str(0, 50, { pattern: PATTERNS.SCOPE }), {
            maxItems: 10,
            description: "at most 10, each SCOPE, max 50; default ['dataplane']",
          }),
        ),
        validityDays: t.Optional(t.Union([Int64({ minimum: 1, maximum: 3650, description: 'int64 1..3650; default 365' }), t.Null()])),
        internalApiKey: Nullable(
          Str(1, 4096, {
            description: 'data plane → management plane key: a secret reference with PostgreSQL; plaintext allowed with the embedded store',
          }),
        ),
        routerUrl: Uri('router configuration to embed'),
        routerKey: Nullable(Str(1, 4096, { description: 'plaintext (stored wrapped, replaced by a reference) or a secret reference' })),
        telemetryEndpoint: Nullable(Str(0, 2048, { description: 'OTLP exporter endpoint' })),
        telemetryHeaders: t.Optional(StringMap('extra telemetry export headers')),
        telemetryInsecure: Nullable(t.Boolean()),
        telemetryLocalVars: t.Optional(
          StringMap('local telemetry environment overrides: plaintext or secret references, re-stored as internal references'),
        ),
        telemetryProtocol: Nullable(
          t.Union([t.Literal(''), t.Literal('grpc'), t.Literal('http/protobuf'), t.Literal('http/json')], {
            description: "'', grpc, http/protobuf or http/json",
          }),
        ),
        telemetryTimeout: Nullable(Str(0, 32, { pattern: '^[0-9]+(ns|us|ms|s|m|h)$', description: 'duration ^[0-9]+(ns|us|ms|s|m|h)$' })),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ serviceAccount: ServiceAccountOut, checksum: t.String(), checksumAlgorithm: t.String() }),
  }),
  GetServiceAccount: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetServiceAccount',
    summary: 'A service account’s summary (status, expiry, last use, key fingerprint); never the private key',
    permission: 'customer_member',
    input: t.Object({ id: AccountId() }, { additionalProperties: false }),
    output: t.Object({ serviceAccount: ServiceAccountInfo }),
  }),
  ListServiceAccounts: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListServiceAccounts',
    summary: "List a customer's service accounts (summaries, oldest first); never a private key",
    notes:
      'Revoked accounts are left out unless includeRevoked; expired accounts are listed (status SERVICE_ACCOUNT_STATUS_EXPIRED). workspaceId narrows to one workspace.',
    permission: 'customer_member',
    input: t.Object(
      {
        customerId: Str(1, 63, { pattern: PATTERNS.SLUG, description: 'customer slug (SLUG, 1-63)' }),
        workspaceId: t.Optional(Str(1, 253, { pattern: PATTERNS.ID, description: 'only this workspace (ID, 1-253)' })),
        includeRevoked: t.Optional(t.Boolean({ description: 'default false' })),
        pageSize: PageSize(),
        pageToken: PageToken(),
      },
      { additionalProperties: false },
    ),
    output: Page('serviceAccounts', ServiceAccountInfo),
  }),
  RevokeServiceAccount: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RevokeServiceAccount',
    summary: 'Revoke a service account: its JWTs are refused at once (its data plane at its next pull)',
    notes:
      'An ACTIVE or EXPIRED account may be revoked; revoking a REVOKED one is failed_precondition. The reason is kept in the audit entry.',
    permission: 'platform_admin',
    mutates: { action: 'REVOKE', resource: 'service_account' },
    input: t.Object({ id: AccountId(), reason: Reason() }, { additionalProperties: false }),
    output: t.Object({ revokedAt: Timestamp(), success: t.Boolean() }),
  }),
  RestoreServiceAccount: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RestoreServiceAccount',
    summary: 'Restore a revoked service account (ACTIVE again unless past its expiry)',
    notes:
      'Only a REVOKED account may be restored, and only while its customer and workspace exist (failed_precondition otherwise): an account revoked by their delete stays revoked. The reason is kept in the audit entry.',
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'service_account' },
    input: t.Object({ id: AccountId(), reason: Reason() }, { additionalProperties: false }),
    output: t.Object({ serviceAccount: ServiceAccountInfo, success: t.Boolean() }),
  }),
};

/** A create argument: optional without a server-filled value, kept in state as written. */
const ARG = { optionalComputed: false, keep: true } as const;

/** Custom in Terraform: no update (every argument replaces the account), read drops a revoked one (iac/provider/hooks.ts). */
export const ServiceAccountResources = {
  serviceAccount: defineResource({
    owner: 'customer',
    audit: 'service_account',
    stored: [{ table: 'service_accounts', removal: 'revoke' }],
    change: { kind: 'SERVICE_ACCOUNT', entity: 'service_account', keepsApiKeys: true },
    terraform: {
      type: 'gateway_service_account',
      description:
        'A service account (RSA key pair) for a workspace: the identity a separate data plane pulls its configuration with. The private key is known once, at creation, and kept (sensitive) in state; destroy revokes the account.',
      create: ServiceAccountOps.CreateServiceAccount,
      get: ServiceAccountOps.GetServiceAccount,
      delete: ServiceAccountOps.RevokeServiceAccount,
      envelope: 'serviceAccount',
      args: [
        { api: 'customerId' },
        { api: 'workspaceId' },
        { api: 'apiUri', ...ARG },
        { api: 'audience', ...ARG },
        { api: 'issuer', ...ARG },
        { api: 'jwksUri', ...ARG },
        { api: 'serveUrl', ...ARG },
        { api: 'scopes', ...ARG },
        { api: 'validityDays', ...ARG },
        { api: 'internalApiKey', ...ARG, sensitive: true, writeOnlyForm: true },
        { api: 'routerUrl', ...ARG },
        { api: 'routerKey', ...ARG, sensitive: true, writeOnlyForm: true },
        { api: 'telemetryEndpoint', ...ARG },
        { api: 'telemetryHeaders', ...ARG, sensitive: true },
        { api: 'telemetryInsecure', ...ARG },
        { api: 'telemetryLocalVars', ...ARG, sensitive: true },
        { api: 'telemetryProtocol', ...ARG },
        { api: 'telemetryTimeout', ...ARG },
        { computed: 'email', api: 'email', description: 'the client email (JWT sub)' },
        { computed: 'private_key_id', api: 'privateKeyId', description: 'the key id (JWT kid)' },
        {
          computed: 'private_key',
          api: 'privateKey',
          description: 'PEM (PKCS#8) RSA private key; returned once by the API, kept in state',
          sensitive: true,
        },
        {
          computed: 'credentials_json',
          api: 'credentialsJson',
          description:
            'the CreateServiceAccount answer (serviceAccount, checksum): the file `serve --role data --service-account FILE` reads',
          sensitive: true,
        },
        { computed: 'checksum', api: 'checksum', description: 'sha256 (hex) over the RFC 8785 canonical JSON of the service account' },
        {
          computed: 'public_key_fingerprint',
          api: 'publicKeyFingerprint',
          description: 'RFC 7638 JWK thumbprint (SHA-256) of the public key',
        },
        { computed: 'status', api: 'status', description: 'SERVICE_ACCOUNT_STATUS_ACTIVE (a revoked or expired account reads as gone)' },
        { computed: 'created_at', api: 'createdAt', description: 'RFC 3339' },
        { computed: 'expires_at', api: 'expiresAt', description: 'RFC 3339' },
      ],
      check: (r) => checkServiceAccountScopes(reqList(r.scopes)),
    },
  }),
};
