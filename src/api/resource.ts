import type { TObject, TSchema } from '@sinclair/typebox';
import type { OpSpec } from './op.ts';

/**
 * A configuration resource declared once, beside its operation specs (src/api/ops/*): its owner
 * and tables (from which the cascade of a customer's or project's deletion is generated,
 * control-plane/cascade.ts), the name its audit entries give it, the change it records for the
 * data planes, its section of the data planes' configuration document and its Terraform mapping,
 * all as data. The registries read these (src/api/registry.ts, generated):
 * `RESOURCES` (resources.ts) collects the changes, `documentSections` the sections (composed into
 * the document's schema by config-document.ts), the Terraform provider (iac/provider/declared.ts)
 * builds its resources from the mappings. What a mapping cannot say stays in the provider as a
 * hook (iac/provider/hooks.ts, keyed by TerraformType); how a section's rows are read from the
 * store, and what they add to the data plane's snapshot, is its section module
 * (src/propagation/sections/*: its loader and its snapshot builder).
 */

/** What a write of the resource records (`config_changes`), read by control-plane/deps.ts `recordChange`. */
export interface ChangeDecl {
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

/** A Terraform argument: a request field of the create operation, typed and bounded by its schema. */
export interface TfArg {
  /** The request field (camelCase; dotted for a nested one, e.g. enterpriseContext.scopes). */
  api: string;
  /** The attribute name; default: the field's last part in snake_case. */
  tf?: string;
  /** Changes in place through the update operation when its request has the field; otherwise a change replaces. */
  update?: true;
  /** Required/optional; default: as in the create request. */
  required?: boolean;
  /** `false`: optional without a server-filled value (not computed). */
  optionalComputed?: false;
  forceNew?: boolean;
  sensitive?: true;
  /** Not returned by the API: state keeps what was planned. */
  keep?: true;
  /** The response field when it differs from the request field. */
  read?: string;
  /** Replaces the schema's description. */
  description?: string;
  /**
   * A secret that may also be given write-only (Terraform >= 1.11): adds `<tf>_wo` (never stored in
   * state, sent on create and whenever `<tf>_wo_version` changes) and `<tf>_wo_version`.
   */
  writeOnlyForm?: true;
}

/** A read-only attribute the server computes (a response field). */
export interface TfComputed {
  computed: string;
  api: string;
  description: string;
  sensitive?: true;
  /** The server may change it on any update (unknown in an update's plan). */
  volatile?: true;
}

/** An attribute of a nested block: a field of the list items' schema. */
export interface TfBlockAttr {
  api: string;
  tf?: string;
  required?: true;
  /** Optional with a server-filled default. */
  computed?: true;
}

/** A list of nested blocks kept in the order given (a request field holding a list of objects). */
export interface TfBlock {
  tf: string;
  api: string;
  attrs: TfBlockAttr[];
  description: string;
  /** Bounds when the schema has none. */
  minItems?: number;
  maxItems?: number;
}

export interface TerraformDecl {
  type: `gateway_${string}`;
  description: string;
  /** Its arguments' schemas are the create request's fields. */
  create: OpSpec;
  get?: OpSpec;
  update?: OpSpec;
  delete?: OpSpec;
  /** The response field holding the object. */
  envelope?: string;
  /** The natural key: Get/Update/Delete take these fields; the import id is their values joined by '/'. */
  key?: TfArg[];
  /** Or the UUID: Get/Update/Delete take it in this request field; the import id is the UUID. */
  idField?: string;
  /** No Get: read by paging this list operation for the item whose last key field matches. */
  list?: { op: OpSpec; field: string };
  args: (TfArg | TfComputed)[];
  blocks?: TfBlock[];
  /** The import id's parts (attribute names joined by '/') when neither the key nor the UUID. */
  importId?: string[];
  /**
   * The API's own cross-field rules — the same functions its handlers run — over the create
   * request as the configuration gives it (fields by their `api` path; unset ones absent). Throws
   * `invalid_argument` naming the field; the provider runs it at validate and plan, and skips it
   * while a field it reads is unknown.
   */
  check?: (request: PlanRequest) => void;
}

/** A create request built from a Terraform configuration: request field (`api` path) → value. */
export type PlanRequest = Readonly<Record<string, unknown>>;
/** A request field as text, or null. */
export const reqText = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** A request field as a list of text (absent: empty). */
export const reqList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
/** A request field as a number, or null. */
export const reqNumber = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * How secret fields are declared in one form of the configuration document: the plaintext form
 * (in memory) and the sealed form (what leaves the management plane) each give their own schema
 * for a secret string and a secret JSON object (api/config-document.ts).
 */
export interface SecretForms<T extends TSchema = TSchema, J extends TSchema = TSchema> {
  /** A secret string. */
  text: T;
  /** A secret JSON object. */
  json: J;
}

/**
 * A section's row schema, written once for both forms of the document: every secret field is
 * `secret.text` or `secret.json` (optionally in a union with null), so the sealed form follows.
 */
export type SectionRow = <T extends TSchema, J extends TSchema>(secret: SecretForms<T, J>) => TObject;

/** The resource's section of the data planes' configuration document (an array of rows). */
export interface DocumentDecl {
  /** The document's property. */
  section: string;
  row: SectionRow;
  /** Absent in documents written before the section existed (a data plane still reads those). */
  optional?: true;
}

/** Who owns a resource: deleting the owner removes its rows (control-plane/cascade.ts is generated from the declarations). */
export type Owner = 'project' | 'customer' | 'global';

/**
 * A store table holding a resource's rows, and what the deletion of their owner does to them (for
 * an owner itself, a customer or a project: what its own deletion does to its row).
 */
export interface StoredDecl {
  /** The table's SQL name (src/store/schema/*). */
  table: string;
  /**
   * `delete`: the rows are deleted; `soft-delete`: their `deleted_at` is set; `revoke`: their
   * `revoked_at` is set (and the table's revocation reason, where it keeps one: '<owner> deleted').
   * Only rows not yet soft-deleted or revoked are touched.
   */
  removal: 'delete' | 'soft-delete' | 'revoke';
  /** `updated_at` is set too. */
  touch?: true;
  /**
   * Whose deletion removes the rows, each through its owner column (`project_uuid`, `customer_uuid`);
   * default: the resource's owner. A project's rows go with its customer through the project.
   */
  removedWith?: readonly Exclude<Owner, 'global'>[];
}

export interface ResourceDecl {
  owner: Owner;
  /**
   * The resource type its audit entries name (`resourceType`): an operation's `mutates.resource`
   * is one of these (AuditResource, src/api/audit-resources.ts, generated).
   */
  audit?: string;
  /** Where its rows are kept (absent: in another resource's tables, or none). */
  stored?: readonly StoredDecl[];
  change?: ChangeDecl;
  /** Served by the data planes: its section of the configuration document (its loader: src/propagation/sections/*). */
  document?: DocumentDecl;
  terraform?: TerraformDecl;
}

/** Declares a resource; keeps its literal kinds, entities, audit names and Terraform types (ChangeKind, AuditResource and TerraformType are their unions). */
export const defineResource = <const D extends ResourceDecl>(decl: D): D => decl;
