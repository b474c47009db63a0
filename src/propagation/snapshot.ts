import type { GuardrailRule } from '../governance/guardrail-scan.ts';
import type { BudgetPeriod } from '../governance/periods.ts';
import type { RateLimitSetting, RecordRetentionSetting, ResponseCacheSetting } from '../governance/setting-values.ts';
import type { McpSnapshot } from '../mcp/config.ts';
import type { ConnectionConfig, ProviderAdapter } from '../providers/types.ts';

/**
 * The data plane's only truth: immutable plain data with a revision. Built by `buildSnapshot`
 * from store rows (or from a pulled config document), read once per request, swapped atomically.
 */

export interface Prices {
  /** USD per million tokens. */
  input: number;
  output: number;
  cached: number;
  cacheWrite: number;
}

export interface CatalogEntry {
  id: string;
  model: string;
  provider: string;
  mode: string | null;
  capabilities: readonly string[];
  contextWindow: number;
  maxOutputTokens: number;
  prices: Prices;
  isEnabled: boolean;
  /** Unix seconds. */
  created: number;
}

export interface ResolvedTarget {
  connection: ConnectionConfig;
  adapter: ProviderAdapter;
  upstreamModel: string;
  priority: number;
  weight: number;
}

export interface RouteSnapshot {
  id: string;
  model: string;
  /** Targets grouped by priority, ascending; each group keeps the configured order. */
  tiers: readonly (readonly ResolvedTarget[])[];
  timeoutMs: number;
  maxRetries: number;
  /** False while disabled or while a target connection is not on this data plane. */
  active: boolean;
  /** The project's `global-fallback` targets, tried once each in order after every target of the route failed retryably. */
  fallback: readonly ResolvedTarget[];
}

export interface ProjectSnapshot {
  /** The project's row id, and its customer's: a re-created slug is another project. */
  id: string;
  customerUuid: string;
  customerId: string;
  projectId: string;
  /** Catalog entries assigned to the project, by public model id. */
  models: ReadonlyMap<string, CatalogEntry>;
  routes: ReadonlyMap<string, RouteSnapshot>;
  /** User ids of the project's current members (user tokens for the project need a membership). */
  members: ReadonlySet<string>;
  /** The `GET /v1/models` body for keys of this project, serialised once per revision. */
  modelListJson: string;
  /** The `rate-limit` setting, when set. */
  rateLimit: RateLimitSetting | undefined;
  /** The `trace-content` setting: prompt and completion text on spans (default false). */
  traceContent: boolean;
  /** The `record-retention` setting (default full bodies, kept forever). */
  retention: RecordRetentionSetting;
  /** The `response-cache` setting (contract §11), when set: answers are cached for the project (or key). */
  responseCache: ResponseCacheSetting | undefined;
  /** The `global-fallback` setting's targets (those this data plane can serve), tried after a route's own. */
  fallback: readonly ResolvedTarget[];
  budgets: readonly BudgetSnapshot[];
  /** Guardrails by the stage they apply to (a `both` rule is in both lists), ordered by name. */
  guardrails: { input: readonly GuardrailRule[]; output: readonly GuardrailRule[] };
  /** BYOK keys (see pipeline/byok.ts): provider id → secret; the newest active key of each scope wins. */
  byok: ByokSnapshot;
}

export interface ByokSnapshot {
  /** Project-level keys. */
  project: ReadonlyMap<string, string>;
  /** User-scoped keys: userId → provider id → secret. */
  users: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

export interface BudgetSnapshot {
  id: string;
  name: string;
  /** null: the whole project. */
  apiKeyId: string | null;
  limitNanoUsd: number;
  period: BudgetPeriod;
}

export interface KeySnapshot {
  id: string;
  customerId: string;
  projectId: string;
  /** Epoch ms, or null for no expiry. */
  expiresAt: number | null;
  project: ProjectSnapshot;
  /** The authenticated user (user tokens only): its user-scoped BYOK keys apply. API keys have none. */
  userId?: string;
}

export interface ConfigSnapshot {
  revision: number;
  builtAt: number;
  /** By SHA-256 hex of the key. */
  keys: ReadonlyMap<string, KeySnapshot>;
  projects: ReadonlyMap<string, ProjectSnapshot>;
  /** Enabled catalog entries, by public model id. */
  catalog: ReadonlyMap<string, CatalogEntry>;
  /** User-token verification keys: JWT `kid` → SPKI PEM. */
  userTokenKeys: ReadonlyMap<string, string>;
  /** Revoked, unexpired user-token ids. */
  revokedTokenIds: ReadonlySet<string>;
  /**
   * What the request's `Host` selects (contract §5), by normalised host (core/hosts.ts): a project
   * gateway's attached projects, or a workspace's project for the URL it adopted (PROXY_URL).
   */
  hosts: ReadonlyMap<string, HostScope>;
  /**
   * The projects served at a host that selects nothing: undefined on the embedded data plane (every
   * project), the workspace's own project on a separate data plane.
   */
  defaultProjects: ReadonlySet<string> | undefined;
  /** A separate data plane's public base URL, adopted from its workspace's newest PROXY_URL event. */
  publicUrl: string | undefined;
  /** The MCP gateway's catalog servers and profiles (src/mcp/config.ts). */
  mcp: McpSnapshot;
}

export interface HostScope {
  kind: 'project_gateway' | 'workspace';
  /** The gateway's or workspace's row id. */
  id: string;
  /** Its slug, for messages. */
  name: string;
  /** Project row ids served at the host. */
  projects: ReadonlySet<string>;
}

export { projectKey } from '../core/ids.ts';

export const DEFAULT_TIMEOUT_MS = 120_000;
