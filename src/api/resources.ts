import { CHANGES, type DECLARATIONS } from './registry.ts';

/**
 * The configuration resources the data planes serve: the change kind and entity a write of each
 * records (control-plane/deps.ts `recordChange`), and what a change of it leaves untouched in the
 * data planes' document (propagation/load.ts reads only what can have moved). Each is declared
 * once, beside its operations (`change` of a `…Resources` declaration in src/api/ops/*, see
 * resource.ts); this is their collection. A change names its resource by key here; kinds and
 * entities are never free strings.
 */
export const RESOURCES = CHANGES;

export type ResourceName = keyof typeof RESOURCES;
export type ChangeKind = (typeof RESOURCES)[ResourceName]['kind'];
export type ChangeEntity = (typeof RESOURCES)[ResourceName]['entity'];

/** Entities whose changes leave the API keys as they were (see ChangeDecl.keepsApiKeys). */
export const ENTITIES_KEEPING_API_KEYS: ReadonlySet<string> = new Set(
  Object.values(RESOURCES)
    .filter((r) => r.keepsApiKeys)
    .map((r) => r.entity),
);

/** The Terraform resource types the declarations map (`terraform.type`): what the provider's hooks and the docs' examples are keyed by. */
export type TerraformType = Extract<(typeof DECLARATIONS)[keyof typeof DECLARATIONS], { terraform: object }>['terraform']['type'];
