/**
 * The provider talks to the management API through the one typed client of src/api (retries with
 * backoff on connection errors and 5xx; errors carry the Connect code). Resources build bodies from
 * their attributes, so they use its untyped `callJson` by operation name.
 */
export { ApiError, isNotFound, type Json, type JsonObject, ManagementClient as GatewayClient } from '../../src/api/client.ts';

export const ADMIN = 'admin.v1.AdminService';
export const APIKEY = 'apikey.v1.ApiKeyService';
