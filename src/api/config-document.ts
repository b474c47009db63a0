import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { JsonObject } from '../canonical/types.ts';
import { documentSections } from './registry.ts';
import type { SecretForms } from './resource.ts';

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
 * form (`SecretForms`, resource.ts: a declared section's row takes them as its parameter); nodes
 * of the plaintext form carry `secret: true`, and seal.ts walks the schema to seal
 * exactly those. A plaintext string is not assignable to `Sealed`, so a sealed document cannot
 * hold one; test/propagation-sealed-document.test.ts checks every secret-like field is declared so.
 */

declare const sealedBrand: unique symbol;
/** A secret sealed for one data plane (a compact JWE, `dir` + A256GCM under the document key). */
export type Sealed = string & { readonly [sealedBrand]: true };

/** base64url(`{"alg":"dir","enc":"A256GCM"}`) `..` iv `.` ciphertext `.` tag. */
export const SEALED_PATTERN = '^eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0\\.\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}$';

const PLAIN = {
  text: Type.String({ secret: true }),
  json: Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown(), { secret: true })),
};
const SEALED_VALUE = Type.Unsafe<Sealed>(Type.String({ pattern: SEALED_PATTERN, secret: true }));
const SEALED = { text: SEALED_VALUE, json: SEALED_VALUE };

const Str = Type.String();
const NullableStr = Type.Union([Type.String(), Type.Null()]);

/**
 * The document: the sections of the declared resources (`document` of a `…Resources` declaration
 * in src/api/ops/*, collected in `documentSections` of registry.ts; each read by its loader in
 * src/propagation/sections/), and around them the sections that are not one resource's rows:
 * - `projects`: the live projects of live customers, the set every loader is restricted to;
 * - `apiKeys`: kept from the previous document between loads, only changed keys read
 *   (propagation/load.ts `keysSince`), which no other section does;
 * - `userTokenKeys` / `revokedTokenIds`: token verification material (signing keys of every
 *   customer, revoked token ids), not configuration a resource declares;
 * - `projectGateways` / `workspaceUrls`: hosting read in steps (gateways, then their projects; the
 *   newest PROXY_URL event per workspace) and scoped to one workspace;
 * - `self`: the separate data plane's own workspace, from the load's scope.
 */
const documentSchema = <T extends TSchema, J extends TSchema>(secret: SecretForms<T, J>) =>
  Type.Object({
    revision: Type.Number(),
    /** `id`: the project row; `customerUuid`: the customer row. */
    projects: Type.Array(Type.Object({ id: Str, customerUuid: Str, customerId: Str, projectId: Str })),
    /** `keyHash`: SHA-256 of the API key (what a presented key is looked up by; not the key). */
    apiKeys: Type.Array(Type.Object({ id: Str, projectUuid: Str, keyHash: Str, customerId: Str, projectId: Str, expiresAt: NullableStr })),
    /** Public keys that sign user tokens (JWT `kid` → SPKI PEM), retired ones included until tokens expire. */
    userTokenKeys: Type.Array(Type.Object({ kid: Str, publicKeyPem: Str })),
    /** Revoked user tokens that have not expired yet. */
    revokedTokenIds: Type.Array(Str),
    ...documentSections(secret),
    /**
     * Project gateways with a URL (contract §5): `host` is the URL's host, lower-cased, port stripped
     * (what the request's `Host` header is matched against); `projectUuids` the live attached projects.
     * Absent in documents written before project gateways were served by host.
     */
    projectGateways: Type.Optional(
      Type.Array(
        Type.Object({ id: Str, customerUuid: Str, workspaceId: Str, projectGatewayId: Str, host: Str, projectUuids: Type.Array(Str) }),
      ),
    ),
    /**
     * Workspace URLs adopted through a PROXY_URL event (SetWorkspaceURL with triggerUpdate): the
     * newest event's URL of each live workspace, its host normalised like a gateway's.
     */
    workspaceUrls: Type.Optional(
      Type.Array(Type.Object({ id: Str, customerUuid: Str, workspaceId: Str, projectUuid: Str, url: Str, host: Str })),
    ),
    /** A separate data plane's own workspace (absent for the embedded data plane, which serves every project). */
    self: Type.Optional(Type.Object({ workspaceUuid: Str, workspaceId: Str, projectUuid: Str })),
    /**
     * Where a separate data plane exports its traces and OTLP metrics: the pulling service account's
     * `dataExports.telemetry` (CreateServiceAccount's telemetry* fields), so that the management plane
     * stays its source of truth. `headers` (may carry credentials) and `localVars` (their values opened
     * from their secret references) are secrets. Absent for the embedded data plane, and from
     * management planes that predate it (the data plane then keeps its identity file's settings).
     */
    dataExports: Type.Optional(
      Type.Object({
        telemetry: Type.Object({
          endpoint: Str,
          headers: secret.json,
          insecure: Type.Boolean(),
          protocol: Str,
          timeout: Str,
          localVars: secret.json,
        }),
      }),
    ),
  });

/** The document with its secrets in plaintext: in memory only. */
export const ConfigDocumentSchema = documentSchema(PLAIN);
export type ConfigDocument = Static<typeof ConfigDocumentSchema>;
/** The declared resources' sections of the document (what the loaders of src/propagation/sections/ give). */
export type DocumentSections = Pick<ConfigDocument, keyof ReturnType<typeof documentSections>>;

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
