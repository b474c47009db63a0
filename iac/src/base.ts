import { type TerraformMetaArguments, TerraformProvider, TerraformResource, TerraformDataSource, TerraformStack } from 'cdktf';
import type { Construct } from 'constructs';
import { refuseLiteralSecrets, refuseResolvedSecrets } from './secret-guard.ts';
import { PROVIDER_VERSION } from './version.ts';

export { PROVIDER_VERSION };
export const PROVIDER_SOURCE = 'gateway.local/gateway/gateway';
const META = { providerName: 'gateway', providerVersion: PROVIDER_VERSION };

export interface GatewayProviderConfig {
  /** Management API base URL; default: env GATEWAY_ENDPOINT. */
  readonly endpoint?: string;
  /**
   * Platform-admin token, user token or service-account JWT (sensitive); default: env GATEWAY_TOKEN.
   * A reference only (e.g. `secretVariable(scope, 'gateway_token')`): a literal is refused (secret-guard.ts).
   */
  readonly token?: string;
  readonly alias?: string;
}

/** The `gateway` provider (source gateway.local/gateway/gateway, installed by `bun run iac:install`). */
export class GatewayProvider extends TerraformProvider {
  constructor(
    scope: Construct,
    id: string,
    private readonly config: GatewayProviderConfig = {},
  ) {
    super(scope, id, { terraformResourceType: 'gateway', terraformProviderSource: PROVIDER_SOURCE, terraformGeneratorMetadata: META });
    if (config.alias) this.alias = config.alias;
    refuseLiteralSecrets('provider "gateway"', { token: config.token }, ['token']);
  }
  protected override synthesizeAttributes(): Record<string, unknown> {
    const attrs = { endpoint: this.config.endpoint, token: this.config.token };
    refuseResolvedSecrets(TerraformStack.of(this), 'provider "gateway"', attrs, ['token']);
    return attrs;
  }
}

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Props → Terraform arguments: camelCase names become the snake_case attributes; map values (labels) stay as given. */
export const toArguments = (props: Record<string, unknown>, blocks: Record<string, string> = {}): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined) continue;
    if (k in blocks && Array.isArray(v)) out[blocks[k] ?? k] = v.map((el: Record<string, unknown>) => toArguments(el));
    else if (k === 'options' && v !== null && typeof v === 'object') out[k] = JSON.stringify(v);
    else out[snake(k)] = v;
  }
  return out;
};

const META_KEYS = ['dependsOn', 'count', 'provider', 'lifecycle', 'forEach', 'provisioners', 'connection'] as const;
const split = <P extends object>(props: P & TerraformMetaArguments): { meta: TerraformMetaArguments; rest: Record<string, unknown> } => {
  const meta: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) ((META_KEYS as readonly string[]).includes(k) ? meta : rest)[k] = v;
  return { meta: meta as TerraformMetaArguments, rest };
};

/** Base of the L1 classes: typed props in, the resource's arguments out, `id` and attributes as tokens. */
export abstract class GatewayResource<P extends object> extends TerraformResource {
  private readonly args: Record<string, unknown>;
  private readonly secrets: readonly string[];
  /** `secrets`: the secret arguments (sensitive or write-only), which must be references (secret-guard.ts). */
  protected constructor(
    scope: Construct,
    id: string,
    type: string,
    props: P & TerraformMetaArguments,
    blocks: Record<string, string> = {},
    secrets: readonly string[] = [],
  ) {
    const { meta, rest } = split(props);
    super(scope, id, { terraformResourceType: type, terraformGeneratorMetadata: META, ...meta });
    this.args = toArguments(rest, blocks);
    this.secrets = secrets;
    refuseLiteralSecrets(type, this.args, secrets);
  }
  protected override synthesizeAttributes(): Record<string, unknown> {
    refuseResolvedSecrets(TerraformStack.of(this), this.terraformResourceType, this.args, this.secrets);
    return this.args;
  }
  /** The server-generated UUID. */
  get id(): string {
    return this.getStringAttribute('id');
  }
  /** Any attribute of the resource, by its Terraform name. */
  attr(name: string): string {
    return this.getStringAttribute(name);
  }
}

/** Base of the data sources. */
export abstract class GatewayDataSource<P extends object> extends TerraformDataSource {
  private readonly args: Record<string, unknown>;
  protected constructor(scope: Construct, id: string, type: string, props: P & TerraformMetaArguments) {
    const { meta, rest } = split(props);
    super(scope, id, { terraformResourceType: type, terraformGeneratorMetadata: META, ...meta });
    this.args = toArguments(rest);
  }
  protected override synthesizeAttributes(): Record<string, unknown> {
    return this.args;
  }
  attr(name: string): string {
    return this.getStringAttribute(name);
  }
}
