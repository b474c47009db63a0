/**
 * The gateway's infrastructure-as-code library: cdktf constructs over the `gateway` Terraform
 * provider (gateway.local/gateway/gateway, built and installed offline by `bun run iac:install`).
 * Built on `constructs` and `cdktf` 0.21; also synthesizes under CDK Terrain (`cdktn`).
 */
export { GatewayProvider, type GatewayProviderConfig, GatewayResource, PROVIDER_SOURCE, PROVIDER_VERSION } from './src/base.ts';
export * from './src/l1.ts';
export * from './src/l2.ts';
