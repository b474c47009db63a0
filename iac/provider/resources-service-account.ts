import type { JsonObject } from './client.ts';
import { envelopeOf, orGone, type ResourceDef, str } from './resource.ts';
import { ID } from './resources.ts';
import { computed, field } from './schema.ts';

/**
 * gateway_service_account: the identity of a separate data plane (or of automation), issue 13.
 * Create → CreateServiceAccount, read → GetServiceAccount, delete → RevokeServiceAccount. There is
 * no update operation: every argument replaces the account (a new key pair; the old account is
 * revoked). The private key is returned once, by the create call: it is kept in state as the
 * sensitive computed `private_key`, and `credentials_json` holds the whole CreateServiceAccount
 * answer as `serve --role data --service-account FILE` reads it. State therefore holds a private
 * key: keep it in an encrypted backend. GetServiceAccount does not return the create arguments, so
 * they are kept in state as given (an out-of-band change is impossible: the account is immutable).
 * A revoked or expired account reads as gone: the next plan creates a new one.
 */

const C = 'CreateServiceAccount';
/** A create argument: optional without a server-filled value, kept in state as written. */
const arg = (api: string, sensitive = false) => field(C, api, { optionalComputed: false, keep: true, ...(sensitive ? { sensitive: true } : {}) });

const ACTIVE = 'SERVICE_ACCOUNT_STATUS_ACTIVE';

export const serviceAccount: ResourceDef = {
  type: 'gateway_service_account',
  description:
    'A service account (RSA key pair) for a workspace: the identity a separate data plane pulls its configuration with. The private key is known once, at creation, and kept (sensitive) in state; destroy revokes the account.',
  attrs: [
    ID,
    field(C, 'customerId'),
    field(C, 'workspaceId'),
    arg('apiUri'),
    arg('audience'),
    arg('issuer'),
    arg('jwksUri'),
    arg('serveUrl'),
    arg('scopes'),
    arg('validityDays'),
    arg('internalApiKey', true),
    arg('routerUrl'),
    arg('routerKey', true),
    arg('telemetryEndpoint'),
    arg('telemetryHeaders', true),
    arg('telemetryInsecure'),
    arg('telemetryLocalVars', true),
    arg('telemetryProtocol'),
    arg('telemetryTimeout'),
    computed('email', 'email', 'string', 'the client email (JWT sub)'),
    computed('private_key_id', 'privateKeyId', 'string', 'the key id (JWT kid)'),
    computed('private_key', 'privateKey', 'string', 'PEM (PKCS#8) RSA private key; returned once by the API, kept in state', { sensitive: true }),
    computed('credentials_json', 'credentialsJson', 'string', 'the CreateServiceAccount answer (serviceAccount, checksum): the file `serve --role data --service-account FILE` reads', {
      sensitive: true,
    }),
    computed('checksum', 'checksum', 'string', 'sha256 (hex) over the RFC 8785 canonical JSON of the service account'),
    computed('public_key_fingerprint', 'publicKeyFingerprint', 'string', 'RFC 7638 JWK thumbprint (SHA-256) of the public key'),
    computed('status', 'status', 'string', 'SERVICE_ACCOUNT_STATUS_ACTIVE (a revoked or expired account reads as gone)'),
    computed('created_at', 'createdAt', 'string', 'RFC 3339'),
    computed('expires_at', 'expiresAt', 'string', 'RFC 3339'),
  ],
  importKeys: ['id'],
  create: async (c, body) => {
    const r = await c.callJson(C, body);
    const sa = envelopeOf(r, 'serviceAccount');
    const info = envelopeOf(await c.callJson('GetServiceAccount', { id: str(sa.id as string) }), 'serviceAccount');
    const out: JsonObject = { ...info, privateKey: sa.privateKey ?? '', privateKeyId: sa.privateKeyId ?? '', checksum: r.checksum ?? '', credentialsJson: JSON.stringify(r) };
    return out;
  },
  read: async (c, s) => {
    const info = await orGone(c.callJson('GetServiceAccount', { id: str(s.id) }), 'serviceAccount');
    return info && info.status === ACTIVE ? info : null;
  },
  delete: async (c, s) => {
    await c.callJson('RevokeServiceAccount', { id: str(s.id), reason: 'terraform destroy' });
  },
};
