import { Type as t } from '@sinclair/typebox';
import {
  CustomerRef,
  Deleted,
  Enum,
  LabelsOut,
  One,
  PATTERNS,
  Page,
  PageSize,
  PageToken,
  ProjectKey,
  Str,
  Success,
  Timestamp,
} from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';
import { Listing } from './assignments.ts';
import { UpstreamAuthValue, upstreamAuthArgs, upstreamAuthFields, upstreamAuthOut, upstreamAuthRow } from './upstream-auth.ts';

/**
 * The A2A agent gateway's configuration (contract §12): the catalog of Agent2Agent agents (the
 * platform admin's), each with its agent card fetched, validated and pinned (`cardSha256`), and
 * their assignment to projects. An assigned agent is served at `/a2a/{agentId}` on the inference
 * listener (src/a2a/). The authentication fields follow the MCP catalog's rules (../mcp-rules.ts).
 */

const ADMIN = 'admin.v1.AdminService';
const CATALOG = 'A2A agents';
const ASSIGN = 'Project assignments';

export const AgentId = () =>
  Str(1, 253, { pattern: PATTERNS.SERVER, description: 'catalog agent id (SERVER, 1-253); served at /a2a/{agentId}' });
const CardUrl = () =>
  Str(1, 2048, {
    pattern: '^https?://',
    description: "the agent's card (http or https URL, usually …/.well-known/agent-card.json); fetched, validated and pinned",
  });
const agentFields = upstreamAuthFields(
  UpstreamAuthValue('the credential sent to the agent (bearer token or header value); secret: wrapped at rest, never returned'),
);

export const A2A_STATES = ['ACTIVE', 'DRIFTED', 'UNREACHABLE'] as const;

export const A2aAgentOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    agentId: t.String(),
    cardUrl: t.String(),
    name: t.String({ description: "the pinned card's name" }),
    skills: t.Array(t.Object({ id: t.String(), name: t.String() }), { description: "the pinned card's skills" }),
    cardSha256: t.String({ description: 'SHA-256 (hex) of the pinned card as fetched' }),
    state: Enum(
      A2A_STATES,
      "'ACTIVE' (the upstream card still hashes to cardSha256), 'DRIFTED' (it changed: calls answer 503 until RefreshA2aAgent) or 'UNREACHABLE' (the card could not be fetched now)",
    ),
    description: t.String(),
    ...upstreamAuthOut(),
    labels: LabelsOut(),
    pinnedAt: Timestamp('when the card was pinned (create or refresh)'),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'A2aAgent (catalog entry)' },
);

export const A2aAgentEntryOut = t.Object(
  { id: t.String(), customerId: t.String(), projectId: t.String(), agentId: t.String(), createdAt: Timestamp() },
  { description: 'ProjectA2aAgentEntry' },
);

const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const AgentKey = t.Object({ agentId: AgentId() }, { additionalProperties: false });

export const A2aOps = {
  CreateA2aAgent: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'CreateA2aAgent',
    summary: 'Add an A2A agent to the catalog: its card is fetched, validated and pinned',
    notes:
      "`cardUrl` follows the upstream address rule (as an MCP server's url), and so does the JSON-RPC interface URL the card names. The card is fetched without following redirects, within 10 s and 1 MiB; a URL that answers no A2A agent card (no name, no JSON-RPC interface) is invalid_argument naming cardUrl, one that cannot be fetched is failed_precondition. authType 'bearer' and 'header' need authValue; 'header' needs authHeader. An agentId in use is already_exists.",
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'a2a_agent' },
    input: t.Object({ agentId: AgentId(), cardUrl: CardUrl(), ...agentFields }, { additionalProperties: false }),
    output: One('agent', A2aAgentOut),
  }),
  GetA2aAgent: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'GetA2aAgent',
    summary: 'Get a catalog A2A agent; its state says whether the upstream card still matches the pin',
    permission: 'authenticated',
    input: AgentKey,
    output: One('agent', A2aAgentOut),
  }),
  ListA2aAgents: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'ListA2aAgents',
    summary: 'List the catalog A2A agents (oldest first)',
    permission: 'authenticated',
    input: t.Object({ pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('agents', A2aAgentOut),
  }),
  UpdateA2aAgent: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'UpdateA2aAgent',
    summary: 'Update a catalog A2A agent (unset fields stay unchanged; a new cardUrl is fetched and pinned)',
    notes:
      "Changing authType to 'none' drops the stored credential; to 'bearer' or 'header' needs a credential (given now or already stored).",
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'a2a_agent' },
    input: t.Object({ agentId: AgentId(), cardUrl: t.Optional(CardUrl()), ...agentFields }, { additionalProperties: false }),
    output: One('agent', A2aAgentOut),
  }),
  DeleteA2aAgent: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'DeleteA2aAgent',
    summary: 'Delete a catalog A2A agent (soft delete)',
    notes: 'Refused (failed_precondition, naming them) while a project has it assigned: remove those first.',
    permission: 'platform_admin',
    mutates: { action: 'DELETE', resource: 'a2a_agent' },
    input: AgentKey,
    output: Deleted(),
  }),
  RefreshA2aAgent: defineOp({
    service: ADMIN,
    group: CATALOG,
    name: 'RefreshA2aAgent',
    summary: "Re-fetch the agent's card and pin it again (a drifted agent is served again)",
    notes: 'The card is checked as on create; a card that no longer validates is refused and the old pin stays.',
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'a2a_agent' },
    input: AgentKey,
    output: One('agent', A2aAgentOut),
  }),
  AddProjectA2aAgent: defineOp({
    service: ADMIN,
    group: ASSIGN,
    name: 'AddProjectA2aAgent',
    summary: 'Assign a catalog A2A agent to a project (its keys and user tokens may then call /a2a/{agentId})',
    notes: 'agentId must name a catalog agent (not_found otherwise). Already assigned is already_exists.',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'project_a2a_agent' },
    input: t.Object({ ...Addr, agentId: AgentId() }, { additionalProperties: false }),
    output: One('entry', A2aAgentEntryOut),
  }),
  RemoveProjectA2aAgent: defineOp({
    service: ADMIN,
    group: ASSIGN,
    name: 'RemoveProjectA2aAgent',
    summary: 'Unassign an A2A agent from a project (calls answer 404 within the propagation time)',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'project_a2a_agent' },
    input: t.Object({ ...Addr, agentId: AgentId() }, { additionalProperties: false }),
    output: Success(),
  }),
  ListProjectA2aAgents: defineOp({
    service: ADMIN,
    group: ASSIGN,
    name: 'ListProjectA2aAgents',
    summary: "List a project's A2A agents",
    permission: 'project_member',
    input: Listing,
    output: Page('entries', A2aAgentEntryOut),
  }),
};

const A = A2aOps;
export const A2aResources = {
  /** A catalog A2A agent: global, like the MCP catalog. */
  a2aAgent: defineResource({
    owner: 'global',
    audit: 'a2a_agent',
    change: { kind: 'A2A_AGENT', entity: 'a2a_agent', keepsApiKeys: true },
    /**
     * The catalog agents some live project is assigned: the pinned card (as fetched) and its hash,
     * the JSON-RPC URL it names, and `authValue`, the upstream credential, sealed like every secret.
     */
    document: {
      section: 'a2aAgents',
      optional: true,
      row: (secret) =>
        t.Object({
          agentId: t.String(),
          cardUrl: t.String(),
          card: t.String(),
          cardSha256: t.String(),
          rpcUrl: t.String(),
          ...upstreamAuthRow(secret),
        }),
    },
    terraform: {
      type: 'gateway_a2a_agent',
      description: 'A catalog A2A agent (platform admin): its card URL (fetched and pinned) and the credential the gateway sends it.',
      create: A.CreateA2aAgent,
      get: A.GetA2aAgent,
      update: A.UpdateA2aAgent,
      delete: A.DeleteA2aAgent,
      envelope: 'agent',
      key: [{ api: 'agentId' }],
      args: [{ api: 'cardUrl', update: true }, ...upstreamAuthArgs()],
    },
  }),
  projectA2aAgent: defineResource({
    owner: 'project',
    audit: 'project_a2a_agent',
    stored: [{ table: 'project_a2a_agents', removal: 'delete' }],
    change: { kind: 'PROJECT_A2A_AGENT', entity: 'project_a2a_agent', keepsApiKeys: true },
    document: {
      section: 'projectA2aAgents',
      optional: true,
      row: () => t.Object({ projectUuid: t.String(), agentId: t.String() }),
    },
    terraform: {
      type: 'gateway_project_a2a_agent',
      description: 'A catalog A2A agent assigned to a project (served to its callers at /a2a/{agent_id}).',
      create: A.AddProjectA2aAgent,
      delete: A.RemoveProjectA2aAgent,
      envelope: 'entry',
      list: { op: A.ListProjectA2aAgents, field: 'entries' },
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'agentId' }],
      args: [],
    },
  }),
};
