import type { AuditForwarder } from '../audit/forwarder.ts';
import { connectError } from '../core/errors.ts';
import type { ControllerStatus } from '../propagation/controller.ts';
import type { OpDef } from './connect.ts';
import type { ControlDeps } from './deps.ts';
import { apiKeyOps } from './services/apikeys.ts';
import { assignmentOps } from './services/assignments.ts';
import { auditOps } from './services/audit.ts';
import { auditCheckpointOps } from './services/audit-checkpoints.ts';
import { byokOps } from './services/byok.ts';
import { catalogOps } from './services/catalog.ts';
import { configStatusOps } from './services/config-status.ts';
import { connectionOps } from './services/connections.ts';
import { customerOps } from './services/customers.ts';
import { dataplaneOps } from './services/dataplanes.ts';
import { mcpProfileOps } from './services/mcp-profiles.ts';
import { mcpServerOps } from './services/mcp-servers.ts';
import { memberOps } from './services/members.ts';
import { observabilityOps } from './services/observability.ts';
import { projectGatewayOps } from './services/project-gateways.ts';
import { projectOps } from './services/projects.ts';
import { routeOps } from './services/routes.ts';
import { budgetOps } from './services/budgets.ts';
import { guardrailOps } from './services/guardrails.ts';
import { serviceAccountOps } from './services/service-accounts.ts';
import { settingOps } from './services/settings.ts';
import { telemetryConfigOps } from './services/telemetry-configs.ts';
import { userTokenOps } from './services/user-tokens.ts';

export { userTokenVerifier } from './user-token-auth.ts';
export { serviceAccountVerifier } from './service-account-auth.ts';
export { serviceAccountJwks } from './services/service-accounts.ts';
export { liveCustomerId } from './lookups.ts';

export interface ManagementHooks {
  /** Flushes batched request records before a search. */
  flushRecords: () => Promise<void>;
  /** The embedded data plane's controller status. */
  localStatus: () => ControllerStatus | undefined;
  /** The audit forwarder of this management process (TriggerAuditForward). */
  auditForwarder?: AuditForwarder;
}

/** Every management operation, in documentation order. */
export const managementOps = (deps: ControlDeps, hooks: ManagementHooks): OpDef[] => [
  ...catalogOps(deps),
  ...customerOps(deps),
  ...projectOps(deps),
  ...memberOps(deps),
  ...mcpServerOps(deps),
  ...assignmentOps(deps),
  ...mcpProfileOps(deps),
  ...settingOps(deps),
  ...budgetOps(deps),
  ...guardrailOps(deps),
  ...dataplaneOps(deps),
  ...projectGatewayOps(deps),
  ...userTokenOps(deps, hooks.flushRecords),
  ...serviceAccountOps(deps),
  ...connectionOps(deps),
  ...routeOps(deps),
  ...apiKeyOps(deps),
  ...byokOps(deps),
  ...observabilityOps(deps, hooks.flushRecords),
  ...configStatusOps(deps, hooks.localStatus),
  ...auditOps(deps),
  ...auditCheckpointOps(deps),
  ...telemetryConfigOps(deps, () => {
    if (!hooks.auditForwarder) throw connectError('unavailable', 'audit forwarding does not run in this process');
    return hooks.auditForwarder;
  }),
];
