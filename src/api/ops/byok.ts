import { Type as t } from '@sinclair/typebox';
import { BYOK_PROVIDER_NAMES } from '../../core/byok.ts';
import { CustomerRef, Enum, OptTimestamp, ProjectRef, Str, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource, reqText } from '../resource.ts';
import { checkProviderKey } from './connections.ts';

/**
 * BYOK provider keys (byok.v1.ByokService). The seed's five providers — two general LLM vendors,
 * a cloud-hosted variant of the first and two cloud-platform model services — and the provider ids
 * (adapters) whose traffic each key serves:
 *
 *   PROVIDER_OPENAI       → openai
 *   PROVIDER_ANTHROPIC    → anthropic
 *   PROVIDER_AZURE_OPENAI → azure-openai
 *   PROVIDER_BEDROCK      → bedrock
 *   PROVIDER_VERTEX       → vertex
 *
 * Scope: a project-level key (userScope false) is registered and revoked by the project owner (a
 * user with the `admin` role in the project, or the platform admin) and visible to every member;
 * a user-scoped key belongs to the calling user (any member registers one for themself), is
 * visible only to that user (and the platform admin), and is preferred over the project key for
 * that user's inference traffic. customerId/projectId default to the caller's session (the user
 * token's customer and `project` claim, else the default project).
 */

const SERVICE = 'byok.v1.ByokService';
const GROUP = 'BYOK keys';

const ProviderIn = () => Enum(BYOK_PROVIDER_NAMES, `one of ${BYOK_PROVIDER_NAMES.join(', ')} (PROVIDER_UNSPECIFIED is refused)`);
const KeyId = () => Str(1, 64, { description: 'byok_… id' });
/** customerId/projectId: left empty, the caller's session (user tokens only). */
const Scoped = { customerId: t.Optional(CustomerRef()), projectId: t.Optional(ProjectRef()) };

export const AiKey = t.Object(
  {
    id: t.String({ description: 'byok_…' }),
    name: t.String(),
    provider: t.String({ description: 'PROVIDER_…' }),
    customerId: t.String(),
    projectId: t.String(),
    displaySuffix: t.String({ description: 'last 4 characters of the secret' }),
    secretRef: t.String({ description: 'reference to the wrapped secret: byok://<customerId>/<projectId>/<id>' }),
    userScope: t.Boolean(),
    scopeUserId: t.String({ description: "owner of a user-scoped key; '' for a project-level key" }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    revokedAt: OptTimestamp('absent while active'),
  },
  { description: 'a BYOK key (never the secret)' },
);

export const ByokOps = {
  Register: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'Register',
    summary: 'Register a provider key (wrapped at once; never returned except by Fetch)',
    notes:
      'userScope false (default): a project-level key — only the project owner (admin role, or the platform admin). userScope true: a key of the calling user, for themself (any project member; not the platform-admin token). customerId/projectId default to the session. Provider ids: PROVIDER_OPENAI → openai, PROVIDER_ANTHROPIC → anthropic, PROVIDER_AZURE_OPENAI → azure-openai, PROVIDER_BEDROCK → bedrock (a Bedrock API key, or `ACCESS_KEY_ID:SECRET_ACCESS_KEY` for SigV4), PROVIDER_VERTEX → vertex (the service-account JSON).',
    permission: 'project_member',
    mutates: { action: 'CREATE', resource: 'byok_key' },
    input: t.Object(
      {
        provider: ProviderIn(),
        name: Str(1, 255, { description: 'operator label (1-255)' }),
        secret: Str(1, 16384, { description: 'plaintext provider key; wrapped immediately, never returned except by Fetch' }),
        userScope: t.Optional(t.Boolean({ description: 'default false' })),
        ...Scoped,
      },
      { additionalProperties: false },
    ),
    output: t.Object({ key: AiKey }),
  }),
  Get: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'Get',
    summary: 'A BYOK key (metadata only)',
    notes:
      'A user-scoped key is visible only to its owner (and the platform admin): others get not_found. customerId/projectId default to the session.',
    permission: 'project_member',
    input: t.Object({ id: KeyId(), ...Scoped }, { additionalProperties: false }),
    output: t.Object({ key: AiKey }),
  }),
  List: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'List',
    summary: "A project's BYOK keys (metadata only): project-level keys and the caller's own user-scoped keys",
    notes: 'Revoked keys are listed with revokedAt. customerId/projectId default to the session.',
    permission: 'project_member',
    input: t.Object(Scoped, { additionalProperties: false }),
    output: t.Object({ keys: t.Array(AiKey) }),
  }),
  Revoke: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'Revoke',
    summary: 'Revoke a BYOK key; inference stops using it once the change reaches the data plane',
    notes:
      'A project-level key: the project owner (admin role) or the platform admin; a user-scoped key: its owner or the platform admin. Revoking a revoked key changes nothing.',
    permission: 'project_member',
    mutates: { action: 'REVOKE', resource: 'byok_key' },
    input: t.Object({ id: KeyId(), ...Scoped }, { additionalProperties: false }),
    output: t.Object({}),
  }),
  Fetch: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'Fetch',
    summary: 'The decrypted secret of an active BYOK key',
    notes:
      'Only an active key (a revoked one is failed_precondition). A project-level key: the project owner (admin role) or the platform admin; a user-scoped key: its owner or the platform admin. The data plane does not call Fetch: it receives the keys it needs with its configuration.',
    permission: 'project_member',
    input: t.Object({ id: KeyId() }, { additionalProperties: false }),
    output: t.Object({ provider: t.String(), displaySuffix: t.String(), secret: t.String({ description: 'decrypted plaintext' }) }),
  }),
};

/** Custom in Terraform: Register/Get/Revoke on the BYOK service, no update (iac/provider/hooks.ts). */
export const ByokResources = {
  byokKey: defineResource({
    owner: 'project',
    audit: 'byok_key',
    stored: [{ table: 'byok_keys', removal: 'revoke', touch: true }],
    change: { kind: 'BYOK_KEY', entity: 'byok_key', keepsApiKeys: true },
    /**
     * Unrevoked BYOK keys of live projects, oldest first: `provider` is the provider id the key
     * serves (core/byok.ts); `userId` is '' for a project-level key.
     */
    document: {
      section: 'byokKeys',
      row: (secret) => t.Object({ id: t.String(), projectUuid: t.String(), provider: t.String(), userId: t.String(), secret: secret.text }),
    },
    terraform: {
      type: 'gateway_byok_key',
      description: 'A project-level provider key (BYOK); inference prefers it over the route connection key of the same provider.',
      create: ByokOps.Register,
      get: ByokOps.Get,
      delete: ByokOps.Revoke,
      envelope: 'key',
      args: [
        { api: 'customerId', required: true },
        { api: 'projectId', required: true },
        { api: 'provider', tf: 'provider_name' },
        { api: 'name' },
        {
          api: 'secret',
          optionalComputed: false,
          sensitive: true,
          keep: true,
          writeOnlyForm: true,
          description: 'the provider key; kept in state as given, never read back (an import has none in state)',
        },
        { computed: 'display_suffix', api: 'displaySuffix', description: 'last 4 characters of the secret' },
        { computed: 'secret_ref', api: 'secretRef', description: 'reference to the stored wrapped secret' },
      ],
      importId: ['customer_id', 'project_id', 'id'],
      check: (r) => {
        const secret = reqText(r.secret);
        if (secret !== null) checkProviderKey('secret', reqText(r.provider), secret);
      },
    },
  }),
};
