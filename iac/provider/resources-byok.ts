import type { GatewayClient, JsonObject } from './client.ts';
import { envelopeOf, orGone, type ResourceDef, str } from './resource.ts';
import { ID } from './resources.ts';
import { computed, field } from './schema.ts';

/**
 * gateway_byok_key: a project-level bring-your-own provider key (byok.v1.ByokService). The
 * `secret` is sensitive, sent once and kept in state as given (the API returns it only through
 * Fetch, so an out-of-band change of the secret is not detected — as for connection keys).
 * Keys cannot be edited: any change replaces the key (Register a new one, Revoke the old one).
 * User-scoped keys belong to one user's own session and are not managed by Terraform.
 */
export const BYOK = 'byok.v1.ByokService';

const key = (c: GatewayClient, s: { id?: unknown; customer_id?: unknown; project_id?: unknown }): Promise<JsonObject | null> =>
  orGone(c.callJson('Get', { id: str(s.id as string), customerId: str(s.customer_id as string), projectId: str(s.project_id as string) }, BYOK), 'key');

export const byokKey: ResourceDef = {
  type: 'gateway_byok_key',
  description: 'A project-level provider key (BYOK); inference prefers it over the route connection key of the same provider.',
  attrs: [
    ID,
    field('Register', 'customerId', { required: true }),
    field('Register', 'projectId', { required: true }),
    field('Register', 'provider', { tf: 'provider_name' }),
    field('Register', 'name'),
    field('Register', 'secret', { optionalComputed: false, sensitive: true, keep: true }),
    computed('display_suffix', 'displaySuffix', 'string', 'last 4 characters of the secret'),
    computed('secret_ref', 'secretRef', 'string', 'reference to the stored wrapped secret'),
  ],
  importKeys: ['customer_id', 'project_id', 'id'],
  create: async (c, body) => envelopeOf(await c.callJson('Register', { ...body, userScope: false }, BYOK), 'key'),
  read: async (c, s) => {
    const k = await key(c, s);
    // A revoked key reads as gone, so the next plan registers it again.
    return k && !(typeof k.revokedAt === 'string' && k.revokedAt !== '') ? k : null;
  },
  delete: async (c, s) => {
    await c.callJson('Revoke', { id: str(s.id), customerId: str(s.customer_id), projectId: str(s.project_id) }, BYOK);
  },
};
