import type { Static } from '@sinclair/typebox';
import { OPS } from './registry.ts';

/**
 * The management API as data: every operation's spec by name (src/api/ops/*, collected by the
 * generated registry.ts). Imports no store, no handler and no data-plane code
 * (test/api-imports.test.ts holds that): the server binds handlers to these, the typed client
 * (client.ts) and the Terraform provider read them.
 */
export { OPS };
export { DECLARATIONS } from './registry.ts';
export { AUDIT_RESOURCES, type AuditResource } from './audit-resources.ts';
export type { TerraformType } from './resources.ts';

export type OpName = keyof typeof OPS;
export type OpInput<N extends OpName> = Static<(typeof OPS)[N]['input']>;
export type OpOutput<N extends OpName> = Static<(typeof OPS)[N]['output']>;
export type { InputOf, OpSpec, OutputOf, Permission, ServiceName } from './op.ts';
