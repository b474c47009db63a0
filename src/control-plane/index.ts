export { managementOps } from './registry.ts';
export type { ManagementHooks } from './deps.ts';
export { userTokenVerifier } from './user-token-auth.ts';
export { serviceAccountVerifier } from './service-account-auth.ts';
export { serviceAccountJwks } from './services/service-accounts.ts';
export { liveCustomerId } from './lookups.ts';
