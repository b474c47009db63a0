import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { JsonObject } from '../canonical/types.ts';

/**
 * Everything a data plane needs, as plain JSON: what the management plane hands to a data plane
 * (in process for the embedded one, over the pull protocol for remote ones).
 *
 * Only live projects of live customers are listed, and every project-owned row names its project
 * by row id (`projectUuid`): the snapshot attaches children by that id, never by slug, so a row of
 * a deleted tenant can never attach to a new tenant of the same slug.
 *
 * The document is one TypeBox schema, written once for two forms: `ConfigDocument`, secrets in
 * plaintext (in memory only: what the loader reads and the snapshot is built from), and
 * `SealedConfigDocument`, every secret a `Sealed` value (what leaves the management plane and what
 * a data plane keeps on disk; see seal.ts). A secret field is declared with `text` or `json` of the
 * form; nodes of the plaintext form carry `secret: true`, and seal.ts walks the schema to seal
 * exactly those. A plaintext string is not assignable to `Sealed`, so a sealed document cannot
 * hold one; test/propagation-sealed-document.test.ts checks every secret-like field is declared so.
 */

declare const sealedBrand: unique symbol;
/** A secret sealed for one data plane (a compact JWE, `dir` + A256GCM under the document key). */
export type Sealed = string & { readonly [sealedBrand]: true };

/** base64url(`{"alg":"dir","enc":"A256GCM"}`) `..` iv `.` ciphertext `.` tag. */
export const SEALED_PATTERN = '^eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0\\.\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}$';

/** How secret fields are declared in one form of the document. */
interface SecretForms<T extends TSchema, J extends TSchema> {
  /** A secret string. */
  text: T;
  /** A secret JSON object. */
  json: J;
}

const PLAIN = {
  text: Type.String({ secret: true }),
  json: Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown(), { secret: true })),
};
const SEALED_VALUE = Type.Unsafe<Sealed>(Type.String({ pattern: SEALED_PATTERN, secret: true }));
const SEALED = { text: SEALED_VALUE, json: SEALED_VALUE };

const Str = Type.String();
const NullableStr = Type.Union([Type.String(), Type.Null()]);
const NullableNum = Type.Union([Type.Number(), Type.Null()]);

const documentSchema = <T extends TSchema, J extends TSchema>(secret: SecretForms<T, J>) =>
  Type.Object({
    revision: Type.Number(),
    /** `id`: the project row; `customerUuid`: the customer row. */
    projects: Type.Array(Type.Object({ id: Str, customerUuid: Str, customerId: Str, projectId: Str })),
    catalog: Type.Array(
      Type.Object({
        id: Str,
        model: Str,
        provider: Str,
        mode: NullableStr,
        capabilities: Type.Array(Str),
        contextWindow: Type.Number(),
        maxOutputTokens: Type.Number(),
        inputPricePerMillion: Type.Number(),
        outputPricePerMillion: Type.Number(),
        cachedPricePerMillion: Type.Number(),
        cacheWritePricePerMillion: Type.Number(),
        isEnabled: Type.Boolean(),
        createdAt: Str,
      }),
    ),
    projectModels: Type.Array(Type.Object({ projectUuid: Str, modelId: Str })),
    projectProviders: Type.Array(Type.Object({ projectUuid: Str, providerName: Str })),
    /** Project members (user ids) by project row: user tokens for a project need a current membership. */
    projectMembers: Type.Array(Type.Object({ projectUuid: Str, userId: Str })),
    connections: Type.Array(
      Type.Object({
        id: Str,
        projectUuid: Str,
        customerId: Str,
        projectId: Str,
        name: Str,
        provider: Str,
        baseUrl: NullableStr,
        /** The provider key (absent: null). */
        apiKey: Type.Union([secret.text, Type.Null()]),
        /** Provider options: sealed whole, as they may carry credentials (`headers`, secret-named options). */
        options: secret.json,
        /** The data plane may connect to private addresses for it (platform admin's save, or the operator's setting). */
        allowPrivate: Type.Optional(Type.Boolean()),
      }),
    ),
    routes: Type.Array(
      Type.Object({
        id: Str,
        projectUuid: Str,
        customerId: Str,
        projectId: Str,
        model: Str,
        targets: Type.Array(Type.Object({ connection: Str, model: Str, priority: Type.Number(), weight: Type.Number() })),
        enabled: Type.Boolean(),
        timeoutMs: NullableNum,
        maxRetries: NullableNum,
      }),
    ),
    /** `keyHash`: SHA-256 of the API key (what a presented key is looked up by; not the key). */
    apiKeys: Type.Array(Type.Object({ id: Str, projectUuid: Str, keyHash: Str, customerId: Str, projectId: Str, expiresAt: NullableStr })),
    /** Public keys that sign user tokens (JWT `kid` → SPKI PEM), retired ones included until tokens expire. */
    userTokenKeys: Type.Array(Type.Object({ kid: Str, publicKeyPem: Str })),
    /** Revoked user tokens that have not expired yet. */
    revokedTokenIds: Type.Array(Str),
    /** Project settings (`rate-limit`, `global-fallback`) as the JSON text stored. */
    settings: Type.Array(Type.Object({ projectUuid: Str, name: Str, value: Str })),
    /** Spend budgets (contract §3.2); `limitNanoUsd` in nano-USD. */
    budgets: Type.Array(Type.Object({ id: Str, projectUuid: Str, apiKeyId: NullableStr, name: Str, limitNanoUsd: Type.Number(), period: Str })),
    /** Guardrails (contract §3.2). */
    guardrails: Type.Array(
      Type.Object({
        id: Str,
        projectUuid: Str,
        name: Str,
        stage: Str,
        kind: Str,
        pattern: NullableStr,
        piiTypes: Type.Array(Str),
        maxTokens: NullableNum,
        action: Str,
      }),
    ),
    /**
     * Unrevoked BYOK keys of live projects, oldest first: `provider` is the provider id the key
     * serves (core/byok.ts); `userId` is '' for a project-level key.
     */
    byokKeys: Type.Array(Type.Object({ id: Str, projectUuid: Str, provider: Str, userId: Str, secret: secret.text })),
    /**
     * Project gateways with a URL (contract §5): `host` is the URL's host, lower-cased, port stripped
     * (what the request's `Host` header is matched against); `projectUuids` the live attached projects.
     * Absent in documents written before project gateways were served by host.
     */
    projectGateways: Type.Optional(
      Type.Array(Type.Object({ id: Str, customerUuid: Str, workspaceId: Str, projectGatewayId: Str, host: Str, projectUuids: Type.Array(Str) })),
    ),
    /**
     * Workspace URLs adopted through a PROXY_URL event (SetWorkspaceURL with triggerUpdate): the
     * newest event's URL of each live workspace, its host normalised like a gateway's.
     */
    workspaceUrls: Type.Optional(Type.Array(Type.Object({ id: Str, customerUuid: Str, workspaceId: Str, projectUuid: Str, url: Str, host: Str }))),
    /**
     * The MCP catalog servers a profile of this document uses (contract §7): `authValue` is the
     * upstream credential (bearer token or header value), sealed like every secret.
     */
    mcpServers: Type.Optional(
      Type.Array(
        Type.Object({
          serverId: Str,
          url: Str,
          transport: Str,
          authType: Str,
          authHeader: NullableStr,
          authValue: Type.Union([secret.text, Type.Null()]),
          allowPrivate: Type.Boolean(),
        }),
      ),
    ),
    /** MCP profiles of live projects; `servers` lists only servers assigned to the project (`tools`: names or `*` globs). */
    mcpProfiles: Type.Optional(
      Type.Array(
        Type.Object({
          id: Str,
          projectUuid: Str,
          profileId: Str,
          servers: Type.Array(Type.Object({ serverId: Str, tools: Type.Optional(Type.Array(Str)), prefix: Str })),
        }),
      ),
    ),
    /**
     * Projects' and members' own credentials for the catalog servers their profiles serve (sent
     * instead of the catalog's `authValue`: the member's, then the project's); `userId` '' is the
     * project's. Absent in documents written before they existed.
     */
    mcpCredentials: Type.Optional(Type.Array(Type.Object({ projectUuid: Str, serverId: Str, userId: Str, authValue: secret.text }))),
    /** A separate data plane's own workspace (absent for the embedded data plane, which serves every project). */
    self: Type.Optional(Type.Object({ workspaceUuid: Str, workspaceId: Str, projectUuid: Str })),
  });

/** The document with its secrets in plaintext: in memory only. */
export const ConfigDocumentSchema = documentSchema(PLAIN);
export type ConfigDocument = Static<typeof ConfigDocumentSchema>;

/** The document with every secret sealed: what travels to a separate data plane and rests on its disk. */
export const SealedConfigDocumentSchema = documentSchema(SEALED);
export type SealedConfigDocument = Static<typeof SealedConfigDocumentSchema>;

/**
 * A sealed document with its key: what a data plane is sent (beside the revision) and keeps in
 * GATEWAY_DATA_DIR/config-cache.json. `sealedKey` is the document key as a JWE (RSA-OAEP-256 +
 * A256GCM) to the public key of the data plane's service account.
 */
export const SealedPullSchema = Type.Object({ document: SealedConfigDocumentSchema, sealedKey: Type.String() });
export type SealedPull = Static<typeof SealedPullSchema>;
