import { Type as t } from '@sinclair/typebox';
import {
  CustomerRef,
  Deleted,
  Description,
  Enum,
  LabelsOut,
  One,
  Page,
  PageSize,
  PageToken,
  ProjectKey,
  Str,
  Success,
  Timestamp,
} from '../kit.ts';
import { MCP_TRANSPORTS } from '../mcp-rules.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';
import { McpProfileOut, ProfileGrants, ProfileId, ProfileServers, ServerId } from './mcp-profile.ts';
import { UpstreamAuthValue, upstreamAuthArgs, upstreamAuthFields, upstreamAuthOut, upstreamAuthRow } from './upstream-auth.ts';

export { McpProfileOut, ServerId };

/**
 * The MCP gateway's configuration (contract §7): the catalog of MCP servers (platform admin's) and
 * the MCP profiles of a project (its admins'): each profile serves, at `/mcp/{profileId}`, the
 * tools of some of the project's assigned servers, filtered and prefixed. The assignments
 * themselves are in assignments.ts; the rules across a server's or a profile's fields in
 * ../mcp-rules.ts.
 */

const ADMIN = 'admin.v1.AdminService';
const CATALOG = 'MCP servers';
const PROFILES = 'MCP profiles';
const CREDENTIALS = 'MCP server credentials';

const ServerUrl = () =>
  Str(1, 2048, {
    pattern: '^https?://',
    description: "the server's MCP endpoint (http or https URL; Streamable HTTP, or the SSE endpoint for transport 'sse')",
  });
const AuthValue = () => UpstreamAuthValue('the credential (bearer token or header value); secret: wrapped at rest, never returned');
const serverFields = {
  transport: t.Optional(Enum(MCP_TRANSPORTS, "'streamable-http' (default) or 'sse' (the 2024-11-05 HTTP+SSE transport)")),
  ...upstreamAuthFields(AuthValue()),
};

export const McpServerOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    serverId: t.String(),
    url: t.String(),
    transport: t.String(),
    description: t.String(),
    ...upstreamAuthOut(),
    labels: LabelsOut(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'McpServer (catalog entry)' },
);

const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const CredentialUser = () =>
  t.Optional(
    Str(0, 255, {
      description:
        "the project member whose own credential it is (the user id of their user tokens); absent or '' = the project's credential",
    }),
  );
const CredentialKey = t.Object({ ...Addr, serverId: ServerId(), userId: CredentialUser() }, { additionalProperties: false });

export const McpCredentialOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    serverId: t.String(),
    userId: t.String({ description: "the member whose credential it is; '' for the project's" }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'McpServerCredential (the credential itself is never returned)' },
);
const ProfileKey = t.Object({ ...Addr, profileId: ProfileId() }, { additionalProperties: false });

export const McpOps = {
  // ---- the catalog
  CreateMcpServer: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'CreateMcpServer',
    summary: 'Add an MCP server to the catalog',
    notes:
      "`url` follows the upstream address rule: a loopback, private, link-local or metadata address is kept only from the platform admin's save (or under GATEWAY_UPSTREAM_ALLOW_PRIVATE). authType 'bearer' and 'header' need authValue; 'header' needs authHeader. A serverId in use is already_exists.",
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'mcp_server' },
    input: t.Object({ serverId: ServerId(), url: ServerUrl(), ...serverFields }, { additionalProperties: false }),
    output: One('server', McpServerOut),
  }),
  GetMcpServer: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'GetMcpServer',
    summary: 'Get a catalog MCP server (the credential is never returned)',
    permission: 'authenticated',
    input: t.Object({ serverId: ServerId() }, { additionalProperties: false }),
    output: One('server', McpServerOut),
  }),
  ListMcpServers: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'ListMcpServers',
    summary: 'List the catalog MCP servers (oldest first)',
    permission: 'authenticated',
    input: t.Object({ pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('servers', McpServerOut),
  }),
  UpdateMcpServer: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'UpdateMcpServer',
    summary: 'Update a catalog MCP server (unset fields stay unchanged; labels replaces the set)',
    notes:
      "Changing authType to 'none' drops the stored credential; to 'bearer' or 'header' needs a credential (given now or already stored).",
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'mcp_server' },
    input: t.Object({ serverId: ServerId(), url: t.Optional(ServerUrl()), ...serverFields }, { additionalProperties: false }),
    output: One('server', McpServerOut),
  }),
  DeleteMcpServer: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'DeleteMcpServer',
    summary: 'Delete a catalog MCP server (soft delete)',
    notes: 'Refused (failed_precondition, naming them) while a project has it assigned or a profile lists it: remove those first.',
    permission: 'platform_admin',
    mutates: { action: 'DELETE', resource: 'mcp_server' },
    input: t.Object({ serverId: ServerId() }, { additionalProperties: false }),
    output: Deleted(),
  }),
  // ---- profiles
  CreateMcpProfile: defineOp({
    service: ADMIN,
    group: PROFILES,
    name: 'CreateMcpProfile',
    summary: 'Create an MCP profile of a project (served at /mcp/{profileId})',
    notes:
      'Every server must be assigned to the project (failed_precondition otherwise). A server removed from the project later drops out of the profiles that list it (they keep the entry and serve it again if it is re-assigned).',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'mcp_profile' },
    input: t.Object(
      { ...Addr, profileId: ProfileId(), description: Description(), servers: ProfileServers(), grants: t.Optional(ProfileGrants()) },
      { additionalProperties: false },
    ),
    output: One('profile', McpProfileOut),
  }),
  GetMcpProfile: defineOp({
    service: ADMIN,
    group: PROFILES,
    name: 'GetMcpProfile',
    summary: 'Get an MCP profile',
    permission: 'project_member',
    input: ProfileKey,
    output: One('profile', McpProfileOut),
  }),
  ListMcpProfiles: defineOp({
    service: ADMIN,
    group: PROFILES,
    name: 'ListMcpProfiles',
    summary: 'List the MCP profiles of a project (oldest first)',
    permission: 'project_member',
    input: t.Object({ ...Addr, pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('profiles', McpProfileOut),
  }),
  UpdateMcpProfile: defineOp({
    service: ADMIN,
    group: PROFILES,
    name: 'UpdateMcpProfile',
    summary: 'Update an MCP profile (unset fields stay unchanged; servers given replaces the list)',
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'mcp_profile' },
    input: t.Object(
      {
        ...Addr,
        profileId: ProfileId(),
        description: Description(),
        servers: t.Optional(ProfileServers()),
        grants: t.Optional(ProfileGrants()),
      },
      { additionalProperties: false },
    ),
    output: One('profile', McpProfileOut),
  }),
  DeleteMcpProfile: defineOp({
    service: ADMIN,
    group: PROFILES,
    name: 'DeleteMcpProfile',
    summary: 'Delete an MCP profile',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'mcp_profile' },
    input: ProfileKey,
    output: Success(),
  }),
  ApproveMcpTools: defineOp({
    service: ADMIN,
    group: PROFILES,
    name: 'ApproveMcpTools',
    summary: "Approve the pending tool definitions of a profile's pinned servers (one server, or all)",
    notes:
      "Pins what the data planes last listed: a changed tool's new definition, an added tool, and forgets a removed one; the tools are listed and callable again within the propagation time. `pendingTools` of GetMcpProfile shows what is approved. A serverId that is not a pinned server of the profile: failed_precondition.",
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'mcp_profile' },
    input: t.Object({ ...Addr, profileId: ProfileId(), serverId: t.Optional(ServerId()) }, { additionalProperties: false }),
    output: One('profile', McpProfileOut),
  }),
  // ---- a project's or a member's own credential for a catalog server
  SetMcpServerCredential: defineOp({
    service: ADMIN,
    group: CREDENTIALS,
    name: 'SetMcpServerCredential',
    summary: "Set the project's, or a member's own, credential for a catalog MCP server (replaces the one set before)",
    notes:
      "Sent upstream in the catalog server's authType/authHeader instead of the catalog's authValue, per call: the calling member's own (user tokens; API keys have no authenticated user), else the project's, else the catalog's — as BYOK keys for providers. The project's (no userId): the project's admins or the platform admin. A member's (userId): that member themself, or the platform admin (the user must be a member of the project). The server must be assigned to the project and take a credential (authType 'bearer' or 'header'): failed_precondition otherwise. Wrapped at rest, never returned.",
    permission: 'project_member',
    mutates: { action: 'UPDATE', resource: 'mcp_server_credential' },
    input: t.Object({ ...Addr, serverId: ServerId(), userId: CredentialUser(), authValue: AuthValue() }, { additionalProperties: false }),
    output: One('credential', McpCredentialOut),
  }),
  DeleteMcpServerCredential: defineOp({
    service: ADMIN,
    group: CREDENTIALS,
    name: 'DeleteMcpServerCredential',
    summary: "Delete the project's, or a member's own, credential for a catalog MCP server",
    notes:
      "Who may: as for SetMcpServerCredential. Calls use the next credential in line (the project's, then the catalog's) within the propagation time. None set: not_found.",
    permission: 'project_member',
    mutates: { action: 'DELETE', resource: 'mcp_server_credential' },
    input: CredentialKey,
    output: Success(),
  }),
  ListMcpServerCredentials: defineOp({
    service: ADMIN,
    group: CREDENTIALS,
    name: 'ListMcpServerCredentials',
    summary:
      "The project's MCP server credentials (metadata only): the project's and the caller's own (every member's for the platform admin)",
    permission: 'project_member',
    input: t.Object({ ...Addr, pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('credentials', McpCredentialOut),
  }),
};

const M = McpOps;
export const McpResources = {
  /** A catalog MCP server: global, like the model catalog. */
  mcpServer: defineResource({
    owner: 'global',
    audit: 'mcp_server',
    change: { kind: 'MCP_SERVER', entity: 'mcp_server', keepsApiKeys: true },
    /**
     * The catalog servers a profile of the document uses (contract §7): `authValue` is the
     * upstream credential (bearer token or header value), sealed like every secret.
     */
    document: {
      section: 'mcpServers',
      optional: true,
      row: (secret) =>
        t.Object({
          serverId: t.String(),
          url: t.String(),
          transport: t.String(),
          ...upstreamAuthRow(secret),
        }),
    },
    terraform: {
      type: 'gateway_mcp_server',
      description: 'A catalog MCP server (platform admin): its endpoint, transport and the credential the gateway sends it.',
      create: M.CreateMcpServer,
      get: M.GetMcpServer,
      update: M.UpdateMcpServer,
      delete: M.DeleteMcpServer,
      envelope: 'server',
      key: [{ api: 'serverId' }],
      args: [{ api: 'url', update: true }, { api: 'transport', update: true }, ...upstreamAuthArgs()],
    },
  }),
  /** Managed with the API only (a member's own credential is set with that member's token). */
  mcpServerCredential: defineResource({
    owner: 'project',
    audit: 'mcp_server_credential',
    stored: [{ table: 'mcp_server_credentials', removal: 'delete' }],
    change: { kind: 'MCP_SERVER_CREDENTIAL', entity: 'mcp_server_credential', keepsApiKeys: true },
    /** Own credentials for the servers the project's profiles serve (used before the catalog's); `userId` '' is the project's. */
    document: {
      section: 'mcpCredentials',
      optional: true,
      row: (secret) => t.Object({ projectUuid: t.String(), serverId: t.String(), userId: t.String(), authValue: secret.text }),
    },
  }),
  mcpProfile: defineResource({
    owner: 'project',
    audit: 'mcp_profile',
    stored: [{ table: 'mcp_profiles', removal: 'delete' }],
    change: { kind: 'MCP_PROFILE', entity: 'mcp_profile', keepsApiKeys: true },
    /** Profiles of live projects; `servers` lists only servers assigned to the project (`tools`: names or `*` globs). */
    document: {
      section: 'mcpProfiles',
      optional: true,
      row: () => {
        // `pins` (a `pin: true` server once listed): each tool's approved definition hash; absent: never listed.
        const pin = { pin: t.Optional(t.Boolean()), pins: t.Optional(t.Array(t.Object({ name: t.String(), hash: t.String() }))) };
        const server = t.Object({ serverId: t.String(), tools: t.Optional(t.Array(t.String())), prefix: t.String(), ...pin });
        // `role:` grants arrive expanded to the members holding the role (`user:` principals).
        const grant = t.Object({ principal: t.String(), tools: t.Array(t.String()) });
        return t.Object({
          id: t.String(),
          projectUuid: t.String(),
          profileId: t.String(),
          servers: t.Array(server),
          grants: t.Optional(t.Array(grant)),
        });
      },
    },
    terraform: {
      type: 'gateway_mcp_profile',
      description: "An MCP profile of a project, served at /mcp/{profile_id}: some of the project's MCP servers, filtered and prefixed.",
      create: M.CreateMcpProfile,
      get: M.GetMcpProfile,
      update: M.UpdateMcpProfile,
      delete: M.DeleteMcpProfile,
      envelope: 'profile',
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'profileId' }],
      args: [{ api: 'description', update: true }],
      blocks: [
        {
          tf: 'server',
          api: 'servers',
          // The prefix defaults to the serverId (the server answers it); absent tools mean every tool.
          attrs: [
            { api: 'serverId', tf: 'server_id', required: true },
            { api: 'tools' },
            { api: 'prefix', computed: true },
            { api: 'pin' },
          ],
          minItems: 1,
          maxItems: 64,
          description:
            'a server of the profile, in order: server_id (assigned to the project), tools (names or * globs; unset = every tool), prefix (default: the server_id; "" = none), pin (pin tool definitions when first listed; changes wait for ApproveMcpTools)',
        },
        {
          tf: 'grant',
          api: 'grants',
          attrs: [
            { api: 'principal', required: true },
            { api: 'tools', required: true },
          ],
          maxItems: 256,
          description:
            "who may list and call which tools: principal ('api_key:<keyId>', 'user:<userId>', 'role:<project role>'), tools (listed names or * globs); any grant = deny by default",
        },
      ],
    },
  }),
};
