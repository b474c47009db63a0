import { Type as t } from '@sinclair/typebox';
import { PATTERNS, Str, Timestamp } from '../kit.ts';

/** The shapes of an MCP profile (contract §7, §7.1): its servers, its grants, and the profile as returned. */

export const ServerId = () => Str(1, 253, { pattern: PATTERNS.SERVER, description: 'catalog MCP server id (SERVER, 1-253)' });

export const ProfileId = () =>
  Str(1, 64, { pattern: PATTERNS.ID, description: 'profile id (ID, 1-64), unique within the project; served at /mcp/{profileId}' });
/** `*` matches any run of characters; names follow the MCP tool-name rule (plus `/`). */
const ToolName = () => Str(1, 128, { pattern: '^[A-Za-z0-9_.*/-]+$', description: 'a tool name, or a glob with `*` (1-128)' });
const Prefix = () =>
  Str(0, 253, {
    pattern: '^([a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?)?$',
    description: "listed names are '{prefix}__{name}'; default: the serverId; '' = no prefix",
  });

const ProfileServer = t.Object(
  {
    serverId: ServerId(),
    tools: t.Optional(
      t.Array(ToolName(), { minItems: 1, maxItems: 256, uniqueItems: true, description: 'tool names or `*` globs; absent = every tool' }),
    ),
    prefix: t.Optional(Prefix()),
    pin: t.Optional(
      t.Boolean({
        description:
          'pin each tool definition (name, description, input and output schema) when first listed: a changed, added or removed tool is left out and refused until ApproveMcpTools',
      }),
    ),
  },
  { additionalProperties: false },
);
const ProfileGrant = t.Object(
  {
    principal: Str(3, 300, {
      pattern: '^(api_key|user|role):[^\\s]+$',
      description: "who: 'api_key:<keyId>', 'user:<userId>' (a member's user tokens) or 'role:<project role>' (admin, member)",
    }),
    tools: t.Array(ToolName(), {
      minItems: 1,
      maxItems: 256,
      uniqueItems: true,
      description: 'listed (prefixed) tool names or `*` globs; only names the servers list match',
    }),
  },
  { additionalProperties: false },
);
export const ProfileGrants = () =>
  t.Array(ProfileGrant, {
    maxItems: 256,
    description:
      'who may list and call which tools; present = deny by default (a caller no grant names sees no tool), absent = every caller of the project',
  });
const GrantOut = t.Object({ principal: t.String(), tools: t.Array(t.String()) });

const PendingTool = t.Object({
  serverId: t.String(),
  name: t.String({ description: "the tool's name at the server" }),
  change: t.Union([t.Literal('added'), t.Literal('changed'), t.Literal('removed')]),
});

export const ProfileServers = () =>
  t.Array(ProfileServer, {
    minItems: 1,
    maxItems: 64,
    description: 'the servers the profile fronts, in order (each at most once, prefixes distinct)',
  });

export const McpProfileOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    profileId: t.String(),
    description: t.String(),
    servers: t.Array(
      t.Object({ serverId: t.String(), tools: t.Optional(t.Array(t.String())), prefix: t.String(), pin: t.Optional(t.Boolean()) }),
    ),
    grants: t.Optional(t.Array(GrantOut)),
    pendingTools: t.Optional(
      t.Array(PendingTool, {
        description:
          'tools of pinned servers whose definition differs from the approved one, waiting for ApproveMcpTools (GetMcpProfile only)',
      }),
    ),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'McpProfile' },
);
