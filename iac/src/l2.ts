import { TerraformVariable } from 'cdktf';
import { Construct } from 'constructs';
import {
  ApiKey,
  type ApiKeyProps,
  Project,
  type ProjectProps,
  ProjectModel,
  ProviderConnection,
  type ProviderConnectionProps,
  Route,
  type RouteProps,
  type RouteTarget,
} from './l1.ts';

/** L2 constructs: the common shapes in one piece. */

export interface TargetSpec {
  readonly connection: string | ProviderConnection;
  readonly model: string;
}

const nameOf = (c: string | ProviderConnection): string => (typeof c === 'string' ? c : c.name);

/** Route target helpers. */
export const Targets = {
  /** Tried in order: the first is primary, each next one a backup (priority 0, 1, 2, …). */
  fallback: (...chain: TargetSpec[]): RouteTarget[] =>
    chain.map((t, i) => ({ connection: nameOf(t.connection), model: t.model, priority: i, weight: 1 })),
  /** Traffic split by weight among targets of one priority. */
  weighted: (split: (TargetSpec & { weight: number })[], priority = 0): RouteTarget[] =>
    split.map((t) => ({ connection: nameOf(t.connection), model: t.model, priority, weight: t.weight })),
  /** A weighted split as primary, then backups in order. */
  splitWithFallback: (split: (TargetSpec & { weight: number })[], ...backups: TargetSpec[]): RouteTarget[] => [
    ...Targets.weighted(split, 0),
    ...backups.map((t, i) => ({ connection: nameOf(t.connection), model: t.model, priority: i + 1, weight: 1 })),
  ],
};

export interface GatewayProjectProps extends Omit<ProjectProps, 'projectId'> {
  readonly projectId: string;
  /** Catalog model UUIDs enabled for the project. */
  readonly modelIds?: string[];
  /** Provider connections by name. */
  readonly connections?: Record<string, Omit<ProviderConnectionProps, 'customerId' | 'projectId' | 'name'>>;
  /** Routes by public model id. */
  readonly routes?: Record<string, Omit<RouteProps, 'customerId' | 'projectId' | 'model'>>;
  /** Inference keys by construct id. */
  readonly keys?: Record<string, Omit<ApiKeyProps, 'customerId' | 'projectId'>>;
}

/** A project with its models, provider connections, routes and inference keys; routes depend on the connections. */
export class GatewayProject extends Construct {
  readonly project: Project;
  readonly connections: Record<string, ProviderConnection> = {};
  readonly routes: Record<string, Route> = {};
  readonly keys: Record<string, ApiKey> = {};
  readonly models: ProjectModel[] = [];

  constructor(scope: Construct, id: string, props: GatewayProjectProps) {
    super(scope, id);
    const { modelIds, connections, routes, keys, ...projectProps } = props;
    this.project = new Project(this, 'project', projectProps);
    const where = { customerId: this.project.customerId, projectId: this.project.projectId };
    for (const [i, modelId] of (modelIds ?? []).entries()) this.models.push(new ProjectModel(this, `model-${i}`, { ...where, modelId }));
    for (const [name, c] of Object.entries(connections ?? {}))
      this.connections[name] = new ProviderConnection(this, `connection-${name}`, { ...where, name, ...c });
    const all = Object.values(this.connections);
    for (const [model, r] of Object.entries(routes ?? {}))
      this.routes[model] = new Route(this, `route-${model.replace(/[^A-Za-z0-9-]/g, '-')}`, {
        ...where,
        model,
        ...r,
        dependsOn: [...all, ...this.models, ...(r.dependsOn ?? [])],
      });
    for (const [name, k] of Object.entries(keys ?? {})) this.keys[name] = new ApiKey(this, `key-${name}`, { ...where, name, ...k });
  }
}

/**
 * A secret input of the stack: a sensitive `TerraformVariable` (string, required), set at deploy
 * with `TF_VAR_<name>`. Feed it to a secret argument — preferably its write-only form (`apiKeyWo`,
 * `authValueWo`, `secretWo`, `routerKeyWo`, with the matching `…WoVersion`) — so the value reaches
 * neither `cdktf.out` (the synthesized JSON holds `${var.<name>}`) nor, write-only, the state.
 */
export const secretVariable = (scope: Construct, name: string, description = `secret input; set TF_VAR_${name}`): string =>
  new TerraformVariable(scope, name, { type: 'string', sensitive: true, nullable: false, description }).stringValue;
