/**
 * The configuration resources the data planes serve, declared once: the change kind and entity a
 * write of each records (control-plane/deps.ts `recordChange`), and what a change of it leaves
 * untouched in the data planes' document (propagation/load.ts reads only what can have moved).
 * A change names its resource by key here; kinds and entities are never free strings.
 */
interface ResourceDecl {
  /** `config_changes.kind`. */
  kind: string;
  /** `config_changes.entity`: what `entityId` identifies. */
  entity: string;
  /**
   * A change of this resource leaves the API key rows and the set of live projects as they were:
   * a load that follows only such changes keeps the previous document's keys (propagation/load.ts).
   */
  keepsApiKeys: boolean;
}

export const RESOURCES = {
  catalog: { kind: 'CATALOG', entity: 'model', keepsApiKeys: true },
  customer: { kind: 'CUSTOMER', entity: 'customer', keepsApiKeys: false },
  project: { kind: 'PROJECT', entity: 'project', keepsApiKeys: false },
  projectMember: { kind: 'PROJECT_MEMBER', entity: 'project_member', keepsApiKeys: true },
  projectModel: { kind: 'PROJECT_MODEL', entity: 'project_model', keepsApiKeys: true },
  projectProvider: { kind: 'PROJECT_PROVIDER', entity: 'project_provider', keepsApiKeys: true },
  projectMcpServer: { kind: 'PROJECT_MCP_SERVER', entity: 'project_mcp_server', keepsApiKeys: true },
  /** A catalog MCP server: global, like the model catalog. */
  mcpServer: { kind: 'MCP_SERVER', entity: 'mcp_server', keepsApiKeys: true },
  mcpProfile: { kind: 'MCP_PROFILE', entity: 'mcp_profile', keepsApiKeys: true },
  projectSetting: { kind: 'PROJECT_SETTING', entity: 'project_setting', keepsApiKeys: true },
  projectGateway: { kind: 'PROJECT_GATEWAY', entity: 'project_gateway', keepsApiKeys: true },
  budget: { kind: 'BUDGET', entity: 'budget', keepsApiKeys: true },
  guardrail: { kind: 'GUARDRAIL', entity: 'guardrail', keepsApiKeys: true },
  connection: { kind: 'PROVIDER', entity: 'connection', keepsApiKeys: true },
  route: { kind: 'ROUTE', entity: 'route', keepsApiKeys: true },
  /** An API key change names the key's id: the load reads just that key. */
  apiKey: { kind: 'API_KEY', entity: 'api_key', keepsApiKeys: false },
  byokKey: { kind: 'BYOK_KEY', entity: 'byok_key', keepsApiKeys: true },
  userToken: { kind: 'USER_TOKEN', entity: 'user_token', keepsApiKeys: true },
  signingKey: { kind: 'SIGNING_KEY', entity: 'signing_key', keepsApiKeys: true },
  serviceAccount: { kind: 'SERVICE_ACCOUNT', entity: 'service_account', keepsApiKeys: true },
  dataplane: { kind: 'DATAPLANE', entity: 'dataplane', keepsApiKeys: true },
  /** A workspace URL adopted through a PROXY_URL event (SetWorkspaceURL with triggerUpdate). */
  proxyUrl: { kind: 'PROXY_URL', entity: 'dataplane', keepsApiKeys: true },
} as const satisfies Record<string, ResourceDecl>;

export type ResourceName = keyof typeof RESOURCES;
export type ChangeKind = (typeof RESOURCES)[ResourceName]['kind'];
export type ChangeEntity = (typeof RESOURCES)[ResourceName]['entity'];

/** Entities whose changes leave the API keys as they were (see ResourceDecl.keepsApiKeys). */
export const ENTITIES_KEEPING_API_KEYS: ReadonlySet<string> = new Set(
  Object.values(RESOURCES)
    .filter((r) => r.keepsApiKeys)
    .map((r) => r.entity),
);
