import type { Static } from '@sinclair/typebox';
import type { OpSpec } from './op.ts';
import { ApiKeyOps } from './ops/apikeys.ts';
import { AssignmentOps } from './ops/assignments.ts';
import { AuditOps } from './ops/audit.ts';
import { AuditCheckpointOps } from './ops/audit-checkpoints.ts';
import { BudgetOps } from './ops/budgets.ts';
import { ByokOps } from './ops/byok.ts';
import { CatalogOps } from './ops/catalog.ts';
import { ConfigStatusOps } from './ops/config-status.ts';
import { ConnectionOps } from './ops/connections.ts';
import { CustomerOps } from './ops/customers.ts';
import { DataplaneOps, WorkspaceOps } from './ops/dataplanes.ts';
import { GuardrailOps } from './ops/guardrails.ts';
import { McpOps } from './ops/mcp.ts';
import { MemberOps } from './ops/members.ts';
import { ObservabilityOps } from './ops/observability.ts';
import { ProjectGatewayOps } from './ops/project-gateways.ts';
import { ProjectOps } from './ops/projects.ts';
import { RouteOps } from './ops/routes.ts';
import { ServiceAccountOps } from './ops/service-accounts.ts';
import { SettingOps } from './ops/settings.ts';
import { TelemetryConfigOps } from './ops/telemetry-configs.ts';
import { UserTokenOps } from './ops/user-tokens.ts';

/**
 * The management API as data: every operation's spec by name (src/api/ops/*). Imports no store,
 * no handler and no data-plane code (test/api-imports.test.ts holds that): the server binds
 * handlers to these, the typed client (client.ts) and the Terraform provider read them.
 */
export const OPS = {
  ...CatalogOps,
  ...CustomerOps,
  ...ProjectOps,
  ...MemberOps,
  ...AssignmentOps,
  ...SettingOps,
  ...GuardrailOps,
  ...BudgetOps,
  ...DataplaneOps,
  ...WorkspaceOps,
  ...ProjectGatewayOps,
  ...ConnectionOps,
  ...RouteOps,
  ...ApiKeyOps,
  ...ByokOps,
  ...ObservabilityOps,
  ...ConfigStatusOps,
  ...AuditOps,
  ...AuditCheckpointOps,
  ...ServiceAccountOps,
  ...UserTokenOps,
  ...TelemetryConfigOps,
  ...McpOps,
} as const satisfies Record<string, OpSpec>;

export type OpName = keyof typeof OPS;
export type OpInput<N extends OpName> = Static<(typeof OPS)[N]['input']>;
export type OpOutput<N extends OpName> = Static<(typeof OPS)[N]['output']>;
export type { InputOf, OutputOf, OpSpec, Permission, ServiceName } from './op.ts';
