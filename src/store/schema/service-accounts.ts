import { index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, instant } from './columns.ts';
import { customers } from './tenancy.ts';

/** Telemetry export settings embedded in a service account (`dataExports.telemetry`). */
export interface StoredTelemetry {
  endpoint?: string;
  headers?: Record<string, string>;
  insecure?: boolean;
  protocol?: string;
  timeout?: string;
  /** Local environment overrides: every value an internal secret reference (`secret://internal/<uuid>`). */
  localVars?: Record<string, string>;
}

/**
 * Service accounts: the identity of a data plane (and of automation calling the management API).
 * Only the public key is stored; the private key is returned once by CreateServiceAccount.
 */
export const serviceAccounts = pgTable(
  'service_accounts',
  {
    id: idColumn(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    customerId: text('customer_id').notNull(),
    /** The workspace (data plane) slug: the data plane's id in the pull protocol. */
    workspaceId: text('workspace_id').notNull(),
    clientEmail: text('client_email').notNull(),
    kid: text('kid').notNull(),
    publicKeyPem: text('public_key_pem').notNull(),
    publicKeyFingerprint: text('public_key_fingerprint').notNull(),
    apiUri: text('api_uri'),
    serveUrl: text('serve_url'),
    scopes: jsonb('scopes').$type<string[]>().notNull().default([]),
    audience: text('audience').notNull(),
    issuer: text('issuer').notNull(),
    jwksUri: text('jwks_uri').notNull(),
    routerUrl: text('router_url'),
    /** `secret://…` reference of the router key. */
    routerKeyRef: text('router_key_ref'),
    /** Data plane → management plane key: a secret reference (PostgreSQL) or plaintext wrapped (embedded store). */
    internalApiKeyRef: text('internal_api_key_ref'),
    telemetry: jsonb('telemetry').$type<StoredTelemetry>().notNull().default({}),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    expiresAt: instant('expires_at').notNull(),
    revokedAt: instant('revoked_at'),
    revokeReason: text('revoke_reason'),
    lastUsedAt: instant('last_used_at'),
  },
  (t) => [uniqueIndex('service_accounts_kid').on(t.kid), index('service_accounts_customer').on(t.customerId, t.workspaceId)],
);

/**
 * Secrets kept by the management plane, wrapped with the KEK (GATEWAY_KEK). A secret is named by
 * the reference `secret://internal/<id>`; the plaintext never leaves the management process except
 * sealed for the data plane that needs it.
 */
export const storedSecrets = pgTable(
  'stored_secrets',
  {
    id: idColumn(),
    customerId: text('customer_id').notNull(),
    /** What it is for (`router_key`, `telemetry_var`, `internal_api_key`). */
    purpose: text('purpose').notNull(),
    valueWrapped: text('value_wrapped').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('stored_secrets_customer').on(t.customerId)],
);

export type ServiceAccountRow = typeof serviceAccounts.$inferSelect;
