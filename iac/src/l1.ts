import type { TerraformMetaArguments } from 'cdktf';
import type { Construct } from 'constructs';
import { GatewayDataSource, GatewayResource } from './base.ts';

/**
 * L1 constructs: one class per provider resource, props named after the management API's fields
 * (camelCase here, snake_case in Terraform). Bounds, patterns and enums are checked by the
 * provider at plan time, from the API's own schemas.
 */

type Meta = TerraformMetaArguments;

interface Described {
  /** Display name (0-255). */
  readonly name?: string;
  /** Description (0-1000). */
  readonly description?: string;
  /** At most 50 labels; keys 1-255 characters, values at most 255. */
  readonly labels?: Record<string, string>;
}
interface InProject {
  /** Customer slug. */
  readonly customerId: string;
  /** Project slug; unset = the customer's default project. */
  readonly projectId?: string;
}

export interface CustomerProps extends Described, Meta {
  /** Customer slug (lowercase letters, digits, '-'; 1-63). Changing it replaces the customer. */
  readonly customerId: string;
}
/** gateway_customer: a tenant, created with its default project. Import id: `<customerId>`. */
export class Customer extends GatewayResource<CustomerProps> {
  constructor(scope: Construct, id: string, props: CustomerProps) {
    super(scope, id, 'gateway_customer', props);
  }
  get customerId(): string {
    return this.attr('customer_id');
  }
}

export interface ProjectProps extends Described, Meta {
  readonly customerId: string;
  /** Project slug (1-253). */
  readonly projectId: string;
}
/** gateway_project. Import id: `<customerId>/<projectId>`. */
export class Project extends GatewayResource<ProjectProps> {
  constructor(scope: Construct, id: string, props: ProjectProps) {
    super(scope, id, 'gateway_project', props);
  }
  get customerId(): string {
    return this.attr('customer_id');
  }
  get projectId(): string {
    return this.attr('project_id');
  }
}

export type Capability = 'chat' | 'completion' | 'embedding' | 'image' | 'speech' | 'rerank' | 'tools' | 'vision' | 'computer_use' | 'reasoning' | 'caching' | 'json_mode';
export interface ModelProps extends Meta {
  /** Public model id clients send. */
  readonly model: string;
  /** Provider (adapter) id, e.g. openai, anthropic, echo. */
  readonly providerName: string;
  readonly mode?: string;
  readonly capabilities?: Capability[];
  readonly contextWindow?: number;
  readonly maxOutputTokens?: number;
  /** USD per million input tokens. */
  readonly inputPricePerMillion?: number;
  readonly outputPricePerMillion?: number;
  readonly cachedPricePerMillion?: number;
  readonly cacheWritePricePerMillion?: number;
  readonly isEnabled?: boolean;
}
/** gateway_model: a catalog entry. Import id: its UUID. */
export class Model extends GatewayResource<ModelProps> {
  constructor(scope: Construct, id: string, props: ModelProps) {
    super(scope, id, 'gateway_model', props);
  }
  get model(): string {
    return this.attr('model');
  }
}

export interface ProviderConnectionProps extends InProject, Meta {
  /** Connection name (ID pattern), unique in the project; route targets refer to it. */
  readonly name: string;
  /** Adapter id: openai, anthropic, azure-openai, bedrock, gemini, vertex, cohere, echo, … */
  readonly providerName: string;
  /** Overrides the provider's public base URL. */
  readonly baseUrl?: string;
  /** Provider options (region, apiVersion, deployments, headers, …). */
  readonly options?: Record<string, unknown>;
  /** The secret, kept in state (sensitive), never read back. Prefer apiKeyWo. */
  readonly apiKey?: string;
  /** Write-only secret (Terraform >= 1.11): never stored in state. */
  readonly apiKeyWo?: string;
  /** Change it to send apiKeyWo again. */
  readonly apiKeyWoVersion?: number;
}
/** gateway_provider_connection. Import id: `<customerId>/<projectId>/<name>`. */
export class ProviderConnection extends GatewayResource<ProviderConnectionProps> {
  constructor(scope: Construct, id: string, props: ProviderConnectionProps) {
    super(scope, id, 'gateway_provider_connection', props);
  }
  get name(): string {
    return this.attr('name');
  }
}

export interface RouteTarget {
  /** Provider connection name in the same project. */
  readonly connection: string;
  /** Upstream model id. */
  readonly model: string;
  /** 0 = primary, 1 = first backup, … (default 0). */
  readonly priority?: number;
  /** Traffic split within a priority (default 1). */
  readonly weight?: number;
}
export interface RouteProps extends InProject, Meta {
  /** Public model id (a catalog model); one route per model per project. */
  readonly model: string;
  /** Targets, kept in the order given. */
  readonly targets: RouteTarget[];
  readonly enabled?: boolean;
  readonly timeoutMs?: number;
  readonly maxRetries?: number;
}
/** gateway_route. Import id: `<customerId>/<projectId>/<model>`. */
export class Route extends GatewayResource<RouteProps> {
  constructor(scope: Construct, id: string, props: RouteProps) {
    super(scope, id, 'gateway_route', props, { targets: 'target' });
  }
}

export interface ApiKeyProps extends InProject, Meta {
  readonly name?: string;
  readonly userId?: string;
  readonly workspaceId?: string;
  readonly role?: string;
  readonly organizationUnit?: string;
  readonly scopes?: string[];
  readonly expiresInDays?: number;
}
/** gateway_api_key: an inference key; `key` is sensitive, known once. Import id: its UUID. */
export class ApiKey extends GatewayResource<ApiKeyProps> {
  constructor(scope: Construct, id: string, props: ApiKeyProps) {
    super(scope, id, 'gateway_api_key', props);
  }
  /** The key (sk-…), sensitive. */
  get key(): string {
    return this.attr('key');
  }
}

export interface ProjectMemberProps extends Meta {
  readonly customerId: string;
  readonly projectId: string;
  readonly userId: string;
  readonly role: 'admin' | 'member';
}
/** gateway_project_member. Import id: `<customerId>/<projectId>/<userId>`. */
export class ProjectMember extends GatewayResource<ProjectMemberProps> {
  constructor(scope: Construct, id: string, props: ProjectMemberProps) {
    super(scope, id, 'gateway_project_member', props);
  }
}

export interface ProjectModelProps extends Meta {
  readonly customerId: string;
  readonly projectId: string;
  /** Catalog model UUID. */
  readonly modelId: string;
}
/** gateway_project_model. Import id: `<customerId>/<projectId>/<model UUID>`. */
export class ProjectModel extends GatewayResource<ProjectModelProps> {
  constructor(scope: Construct, id: string, props: ProjectModelProps) {
    super(scope, id, 'gateway_project_model', props);
  }
}

export interface ProjectProviderProps extends Meta {
  readonly customerId: string;
  readonly projectId: string;
  readonly providerName: string;
}
/** gateway_project_provider. Import id: `<customerId>/<projectId>/<providerName>`. */
export class ProjectProvider extends GatewayResource<ProjectProviderProps> {
  constructor(scope: Construct, id: string, props: ProjectProviderProps) {
    super(scope, id, 'gateway_project_provider', props);
  }
}

export interface ProjectSettingProps extends Meta {
  readonly customerId: string;
  readonly projectId: string;
  readonly settingName: 'global-fallback' | 'rate-limit';
  /** JSON text (1-1024). */
  readonly settingValue: string;
}
/** gateway_project_setting. Import id: `<customerId>/<projectId>/<settingName>`. */
export class ProjectSetting extends GatewayResource<ProjectSettingProps> {
  constructor(scope: Construct, id: string, props: ProjectSettingProps) {
    super(scope, id, 'gateway_project_setting', props);
  }
}

export interface DataplaneProps extends Described, Meta {
  readonly customerId: string;
  readonly dataplaneId: string;
  readonly projectId?: string;
}
/** gateway_dataplane. Import id: its UUID. */
export class Dataplane extends GatewayResource<DataplaneProps> {
  constructor(scope: Construct, id: string, props: DataplaneProps) {
    super(scope, id, 'gateway_dataplane', props);
  }
}

export interface WorkspaceProps extends Described, Meta {
  readonly customerId: string;
  readonly workspaceId: string;
  readonly projectId?: string;
}
/** gateway_workspace. Import id: its UUID. */
export class Workspace extends GatewayResource<WorkspaceProps> {
  constructor(scope: Construct, id: string, props: WorkspaceProps) {
    super(scope, id, 'gateway_workspace', props);
  }
}

export interface ProjectGatewayProps extends Described, Meta {
  readonly customerId: string;
  readonly workspaceId: string;
  readonly projectGatewayId: string;
  readonly url?: string;
}
/** gateway_project_gateway. Import id: its UUID. */
export class ProjectGateway extends GatewayResource<ProjectGatewayProps> {
  constructor(scope: Construct, id: string, props: ProjectGatewayProps) {
    super(scope, id, 'gateway_project_gateway', props);
  }
}

export interface TelemetryConfigProps extends Meta {
  /** Owner (1-255). */
  readonly userId: string;
  /** traces, metrics, logs or audit_logs. */
  readonly telemetryType: 'traces' | 'metrics' | 'logs' | 'audit_logs';
  /** http(s) URL of the sink; for audit_logs the OTLP/HTTP base (/v1/logs is appended). */
  readonly sinkUrl: string;
  readonly protocol: 'grpc' | 'http/json' | 'http/protobuf';
  readonly authType: 'none' | 'bearer' | 'basic' | 'api_key';
  /** Sensitive: the bearer token, `user:password`, or the API key. */
  readonly authValue?: string;
  readonly apiKeyHeader?: string;
  readonly enabled?: boolean;
  /** Audit forwarding interval, 0-86400 (default 300). */
  readonly forwardIntervalSeconds?: number;
}
/** gateway_telemetry_config. Import id: its UUID. */
export class TelemetryConfig extends GatewayResource<TelemetryConfigProps> {
  constructor(scope: Construct, id: string, props: TelemetryConfigProps) {
    super(scope, id, 'gateway_telemetry_config', props);
  }
}

export interface ByokKeyProps extends Meta {
  readonly customerId: string;
  readonly projectId: string;
  /** PROVIDER_OPENAI, PROVIDER_ANTHROPIC, PROVIDER_AZURE_OPENAI, PROVIDER_BEDROCK or PROVIDER_VERTEX. */
  readonly providerName: string;
  readonly name: string;
  /** Sensitive: the provider key; kept in state as given, never read back. */
  readonly secret: string;
}
/** gateway_byok_key (project-level). Import id: `customer/project/byok_…`. */
export class ByokKey extends GatewayResource<ByokKeyProps> {
  constructor(scope: Construct, id: string, props: ByokKeyProps) {
    super(scope, id, 'gateway_byok_key', props);
  }
}

export interface BudgetProps extends Meta {
  readonly customerId: string;
  readonly projectId: string;
  readonly name: string;
  /** Limit in USD as a canonical decimal string ("25", "0.5"). */
  readonly limitUsd: string;
  readonly period: 'day' | 'week' | 'month' | 'total';
  /** Limit one API key of the project instead of the whole project. */
  readonly apiKeyId?: string;
}
/** gateway_budget. Import id: `customer/project/name`. */
export class Budget extends GatewayResource<BudgetProps> {
  constructor(scope: Construct, id: string, props: BudgetProps) {
    super(scope, id, 'gateway_budget', props);
  }
}

export interface GuardrailProps extends Meta {
  readonly customerId: string;
  readonly projectId: string;
  readonly name: string;
  readonly stage: 'input' | 'output' | 'both';
  readonly kind: 'regex' | 'pii' | 'max_input_tokens';
  readonly pattern?: string;
  readonly piiTypes?: ('email' | 'phone' | 'credit_card' | 'iban' | 'ssn' | 'ip_address')[];
  readonly maxTokens?: number;
  readonly action: 'block' | 'redact' | 'flag';
}
/** gateway_guardrail. Import id: `customer/project/name`. */
export class Guardrail extends GatewayResource<GuardrailProps> {
  constructor(scope: Construct, id: string, props: GuardrailProps) {
    super(scope, id, 'gateway_guardrail', props);
  }
}

export interface ServiceAccountProps extends Meta {
  readonly customerId: string;
  /** The workspace (data plane) slug it identifies; must exist. */
  readonly workspaceId: string;
  /** Management API base URI the data plane pulls from; default: the provider's endpoint as the server saw it. */
  readonly apiUri?: string;
  readonly audience?: string;
  readonly issuer?: string;
  readonly jwksUri?: string;
  readonly serveUrl?: string;
  /** Default ['dataplane']; also 'read' or 'admin' for automation. */
  readonly scopes?: string[];
  /** 1-3650; default 365. */
  readonly validityDays?: number;
  /** Sensitive: a secret reference (plaintext only with the embedded store). */
  readonly internalApiKey?: string;
  readonly routerUrl?: string;
  /** Sensitive: plaintext (stored wrapped) or a secret reference. */
  readonly routerKey?: string;
  readonly telemetryEndpoint?: string;
  readonly telemetryHeaders?: Record<string, string>;
  readonly telemetryInsecure?: boolean;
  readonly telemetryLocalVars?: Record<string, string>;
  readonly telemetryProtocol?: '' | 'grpc' | 'http/protobuf' | 'http/json';
  readonly telemetryTimeout?: string;
}
/**
 * gateway_service_account: every argument replaces the account (there is no update). Destroy
 * revokes it. Import id: its UUID (the private key is then unknown to Terraform).
 */
export class ServiceAccount extends GatewayResource<ServiceAccountProps> {
  constructor(scope: Construct, id: string, props: ServiceAccountProps) {
    super(scope, id, 'gateway_service_account', props);
  }
  /** Sensitive: the PEM private key (returned once by the API, kept in state). */
  get privateKey(): string {
    return this.attr('private_key');
  }
  /** Sensitive: the CreateServiceAccount answer, the file `serve --role data --service-account FILE` reads. */
  get credentialsJson(): string {
    return this.attr('credentials_json');
  }
  get email(): string {
    return this.attr('email');
  }
}

/** Data source gateway_customer. */
export class DataCustomer extends GatewayDataSource<{ customerId: string }> {
  constructor(scope: Construct, id: string, props: { customerId: string } & Meta) {
    super(scope, id, 'gateway_customer', props);
  }
}
/** Data source gateway_project. */
export class DataProject extends GatewayDataSource<{ customerId: string; projectId: string }> {
  constructor(scope: Construct, id: string, props: { customerId: string; projectId: string } & Meta) {
    super(scope, id, 'gateway_project', props);
  }
}
/** Data source gateway_models (optionally of one provider). */
export class DataModels extends GatewayDataSource<{ providerName?: string }> {
  constructor(scope: Construct, id: string, props: { providerName?: string } & Meta = {}) {
    super(scope, id, 'gateway_models', props);
  }
}
