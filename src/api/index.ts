import type { OpSpec } from './op.ts';
import { ApiKeyOps } from './ops/apikeys.ts';
import { BudgetOps } from './ops/budgets.ts';
import { ConnectionOps } from './ops/connections.ts';
import { DataplaneOps, WorkspaceOps } from './ops/dataplanes.ts';
import { GuardrailOps } from './ops/guardrails.ts';
import { ProjectGatewayOps } from './ops/project-gateways.ts';
import { RouteOps } from './ops/routes.ts';

/**
 * The management API as data: every operation's spec by name (src/api/ops/*). Imports no store,
 * no handler and no data-plane code (test/api-imports.test.ts holds that): the server binds
 * handlers to these, the typed client (client.ts) and the Terraform provider read them.
 */
export const OPS = {
  ...GuardrailOps,
  ...BudgetOps,
  ...DataplaneOps,
  ...WorkspaceOps,
  ...ProjectGatewayOps,
  ...ConnectionOps,
  ...RouteOps,
  ...ApiKeyOps,
} as const satisfies Record<string, OpSpec>;

export type OpName = keyof typeof OPS;
export type { InputOf, OutputOf, OpSpec, Permission, ServiceName } from './op.ts';
