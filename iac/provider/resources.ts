import { DECLARATIONS } from '../../src/api/index.ts';
import type { TerraformDecl } from '../../src/api/resource.ts';
import { fromDecl } from './declared.ts';
import { HOOKS, hooksOf } from './hooks.ts';
import type { ResourceDef } from './resource.ts';

/**
 * The resources: one for each Terraform mapping declared in the API module (src/api/ops/*), with
 * its hooks (hooks.ts) — types, bounds, patterns, enums and which fields can change in place come
 * from the operations' schemas (see schema.ts). Sorted by type name.
 */
const declared: TerraformDecl[] = Object.values(DECLARATIONS).flatMap((d): TerraformDecl[] => ('terraform' in d ? [d.terraform] : []));

export const RESOURCES_DECLARED: ResourceDef[] = declared
  .sort((a, b) => a.type.localeCompare(b.type))
  .map((d) => fromDecl(d, hooksOf(d.type)));

// HOOKS is keyed by TerraformType (a hook of an undeclared type does not compile); this guards the build's output too.
const unknownHooks = Object.keys(HOOKS).filter((type) => !declared.some((d) => d.type === type));
if (unknownHooks.length > 0) throw new Error(`hooks for undeclared resources: ${unknownHooks.join(', ')}`);

export { ID } from './declared.ts';
