import type { JsonObject } from '../canonical/types.ts';

/**
 * Everything a data plane needs, as plain JSON: what the management plane hands to a data plane
 * (in process for the embedded one, over the pull protocol for remote ones). Secrets are unwrapped.
 */
export interface ConfigDocument {
  revision: number;
  projects: { customerId: string; projectId: string }[];
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
  projectModels: { customerId: string; projectId: string; modelId: string }[];
  projectProviders: { customerId: string; projectId: string; providerName: string }[];
  connections: {
    id: string;
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
    customerId: string;
    projectId: string;
    model: string;
    targets: { connection: string; model: string; priority: number; weight: number }[];
    enabled: boolean;
    timeoutMs: number | null;
    maxRetries: number | null;
  }[];
  apiKeys: { id: string; keyHash: string; customerId: string; projectId: string; expiresAt: string | null }[];
  /** Public keys that sign user tokens (JWT `kid` → SPKI PEM), retired ones included until tokens expire. */
  userTokenKeys: { kid: string; publicKeyPem: string }[];
  /** Revoked user tokens that have not expired yet. */
  revokedTokenIds: string[];
}
