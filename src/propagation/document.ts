import type { JsonObject } from '../canonical/types.ts';

/**
 * Everything a data plane needs, as plain JSON: what the management plane hands to a data plane
 * (in process for the embedded one, over the pull protocol for remote ones). Secrets are unwrapped.
 *
 * Only live projects of live customers are listed, and every project-owned row names its project
 * by row id (`projectUuid`): the snapshot attaches children by that id, never by slug, so a row of
 * a deleted tenant can never attach to a new tenant of the same slug.
 */
export interface ConfigDocument {
  revision: number;
  /** `id`: the project row; `customerUuid`: the customer row. */
  projects: { id: string; customerUuid: string; customerId: string; projectId: string }[];
  catalog: {
    id: string;
    model: string;
    provider: string;
    mode: string | null;
    capabilities: string[];
    contextWindow: number;
    maxOutputTokens: number;
    inputPricePerMillion: number;
    outputPricePerMillion: number;
    cachedPricePerMillion: number;
    cacheWritePricePerMillion: number;
    isEnabled: boolean;
    createdAt: string;
  }[];
  projectModels: { projectUuid: string; modelId: string }[];
  projectProviders: { projectUuid: string; providerName: string }[];
  /** Project members (user ids) by project row: user tokens for a project need a current membership. */
  projectMembers: { projectUuid: string; userId: string }[];
  connections: {
    id: string;
    projectUuid: string;
    customerId: string;
    projectId: string;
    name: string;
    provider: string;
    baseUrl: string | null;
    apiKey: string | null;
    options: JsonObject;
    /** The data plane may connect to private addresses for it (platform admin's save, or the operator's setting). */
    allowPrivate?: boolean;
  }[];
  routes: {
    id: string;
    projectUuid: string;
    customerId: string;
    projectId: string;
    model: string;
    targets: { connection: string; model: string; priority: number; weight: number }[];
    enabled: boolean;
    timeoutMs: number | null;
    maxRetries: number | null;
  }[];
  apiKeys: { id: string; projectUuid: string; keyHash: string; customerId: string; projectId: string; expiresAt: string | null }[];
  /** Public keys that sign user tokens (JWT `kid` → SPKI PEM), retired ones included until tokens expire. */
  userTokenKeys: { kid: string; publicKeyPem: string }[];
  /** Revoked user tokens that have not expired yet. */
  revokedTokenIds: string[];
  /** Project settings (`rate-limit`, `global-fallback`) as the JSON text stored. */
  settings: { projectUuid: string; name: string; value: string }[];
  /** Spend budgets (contract §3.2); `limitNanoUsd` in nano-USD. */
  budgets: { id: string; projectUuid: string; apiKeyId: string | null; name: string; limitNanoUsd: number; period: string }[];
  /** Guardrails (contract §3.2). */
  guardrails: {
    id: string;
    projectUuid: string;
    name: string;
    stage: string;
    kind: string;
    pattern: string | null;
    piiTypes: string[];
    maxTokens: number | null;
    action: string;
  }[];
  /**
   * Unrevoked BYOK keys of live projects, secrets unwrapped (like connection keys), oldest first:
   * `provider` is the provider id the key serves (core/byok.ts); `userId` is '' for a project-level key.
   */
  byokKeys: { id: string; projectUuid: string; provider: string; userId: string; secret: string }[];
  /**
   * Project gateways with a URL (contract §5): `host` is the URL's host, lower-cased, port stripped
   * (what the request's `Host` header is matched against); `projectUuids` the live attached projects.
   * Absent in documents written before project gateways were served by host.
   */
  projectGateways?: { id: string; customerUuid: string; workspaceId: string; projectGatewayId: string; host: string; projectUuids: string[] }[];
  /**
   * Workspace URLs adopted through a PROXY_URL event (SetWorkspaceURL with triggerUpdate): the
   * newest event's URL of each live workspace, its host normalised like a gateway's.
   */
  workspaceUrls?: { id: string; customerUuid: string; workspaceId: string; projectUuid: string; url: string; host: string }[];
  /** A separate data plane's own workspace (absent for the embedded data plane, which serves every project). */
  self?: { workspaceUuid: string; workspaceId: string; projectUuid: string };
}
