import { GatewayError, invalidApiKey } from '../core/errors.ts';
import { sha256Hex } from '../core/ids.ts';
import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';

/**
 * Finds the caller's API key in the snapshot. Accepts `Authorization: Bearer sk-…` everywhere and
 * `x-api-key: sk-…` (what Messages SDKs before 1.0 send). Never touches the database.
 */
export const authenticate = (headers: Headers, snapshot: ConfigSnapshot, now: number): KeySnapshot => {
  const authz = headers.get('authorization');
  let token: string | undefined;
  if (authz) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m) throw invalidApiKey('The Authorization header must be "Bearer <API key>".');
    token = m[1];
  } else {
    token = headers.get('x-api-key') ?? undefined;
  }
  if (!token) throw invalidApiKey('Missing API key: send "Authorization: Bearer <API key>".');
  const key = snapshot.keys.get(sha256Hex(token));
  if (!key) throw invalidApiKey('Invalid API key.');
  if (key.expiresAt !== null && key.expiresAt <= now) throw invalidApiKey('This API key has expired.');
  return key;
};

export const forbiddenModel = (model: string): GatewayError =>
  new GatewayError({
    kind: 'permission',
    message: `This API key's project has no access to the model '${model}'.`,
    param: 'model',
    errorCode: 'model_not_allowed',
  });
