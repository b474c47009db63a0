import type { Static } from '@sinclair/typebox';
import type { OpSpec } from './op.ts';
import { AssignmentOps } from './ops/assignments.ts';
import { CatalogOps } from './ops/catalog.ts';
import { CustomerOps } from './ops/customers.ts';
import { GuardrailOps } from './ops/guardrails.ts';
import { McpOps } from './ops/mcp.ts';
import { MemberOps } from './ops/members.ts';
import { ProjectOps } from './ops/projects.ts';
import { SettingOps } from './ops/settings.ts';

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
  ...McpOps,
} as const satisfies Record<string, OpSpec>;

export type OpName = keyof typeof OPS;
export type OpInput<N extends OpName> = Static<(typeof OPS)[N]['input']>;
export type OpOutput<N extends OpName> = Static<(typeof OPS)[N]['output']>;
export type { InputOf, OutputOf, OpSpec, Permission, ServiceName } from './op.ts';
