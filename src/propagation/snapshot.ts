import type { GlobalParts, ProjectParts } from './sections/snapshots.ts';

/**
 * The data plane's only truth: immutable plain data with a revision. Built by `buildSnapshot`
 * from store rows (or from a pulled config document), read once per request, swapped atomically.
 * Its core (the projects, keys, tokens and hosts) is build.ts's; every other field is a section's
 * part (src/propagation/sections/*.snapshot.ts, collected by the generated sections/snapshots.ts),
 * so a new section adds its fields here without an edit.
 */

export type { CatalogEntry, Prices } from './sections/catalog.snapshot.ts';
export type { ResolvedTarget } from './sections/connections.snapshot.ts';
export type { RouteSnapshot } from './sections/routes.snapshot.ts';
export { DEFAULT_TIMEOUT_MS } from './sections/routes.snapshot.ts';
export type { ByokSnapshot } from './sections/byok.snapshot.ts';
export type { BudgetSnapshot } from './sections/budgets.snapshot.ts';

export interface ProjectCore {
  /** The project's row id, and its customer's: a re-created slug is another project. */
  id: string;
  customerUuid: string;
  customerId: string;
  projectId: string;
}

/** A project as the request path sees it: its core and every section's part (models, routes, members, BYOK keys, settings, budgets, guardrails, …). */
export type ProjectSnapshot = ProjectCore & ProjectParts;

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

export interface ConfigCore {
  revision: number;
  builtAt: number;
  /** By SHA-256 hex of the key. */
  keys: ReadonlyMap<string, KeySnapshot>;
  projects: ReadonlyMap<string, ProjectSnapshot>;
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
}

/** A configuration revision: its core and every section's part (the catalog, MCP, …). */
export type ConfigSnapshot = ConfigCore & GlobalParts;

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
