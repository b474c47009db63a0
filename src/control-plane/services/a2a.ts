import { and, eq, inArray, isNull } from 'drizzle-orm';
import { CardError, fetchCard, fetchCardText, type PinnedCard } from '../../a2a/card.ts';
import { ts } from '../../api/kit.ts';
import { checkMcpAuth } from '../../api/mcp-rules.ts';
import { A2aOps } from '../../api/ops/a2a.ts';
import { connectError } from '../../core/errors.ts';
import { type A2aAgentRow, a2aAgents, customers, projectA2aAgents, projects } from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader, Tx } from '../deps.ts';
import { uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { checkUpstreamUrls } from '../upstream-addresses.ts';
import { keyedAssignmentOps } from './assignments.ts';

/**
 * The catalog of A2A agents (contract §12), the platform admin's, and their assignment to projects.
 * Create, Update (a new cardUrl) and Refresh fetch the card before their write transaction opens and pin it
 * (`cardSha256`) in it (a cardUrl changed meanwhile: `aborted`); Get and List
 * fetch it again to say whether it still matches (`state`). The credential is wrapped at rest and
 * only the data planes' document carries it (sealed for a separate data plane).
 */

const { CreateA2aAgent, GetA2aAgent, ListA2aAgents, UpdateA2aAgent, DeleteA2aAgent, RefreshA2aAgent } = A2aOps;
const { AddProjectA2aAgent, RemoveProjectA2aAgent, ListProjectA2aAgents } = A2aOps;

type State = 'ACTIVE' | 'DRIFTED' | 'UNREACHABLE';

/** Whether the upstream card still hashes to the pin (fetched now, within 5 s). */
const stateOf = async (r: A2aAgentRow, operatorAllows: boolean): Promise<State> => {
  try {
    const text = await fetchCardText(r.cardUrl, r.allowPrivate || operatorAllows, 5_000);
    return new Bun.CryptoHasher('sha256').update(text).digest('hex') === r.cardSha256 ? 'ACTIVE' : 'DRIFTED';
  } catch {
    return 'UNREACHABLE';
  }
};

const view = (r: A2aAgentRow, state: State) => ({
  id: r.id,
  agentId: r.agentId,
  cardUrl: r.cardUrl,
  name: r.name,
  skills: r.skills,
  cardSha256: r.cardSha256,
  state,
  description: r.description ?? '',
  authType: r.authType,
  authHeader: r.authHeader ?? '',
  hasAuthValue: r.authValueWrapped !== null,
  labels: r.labels,
  pinnedAt: ts(r.pinnedAt),
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

export const findA2aAgent = async (db: Reader, agentId: string, lock?: 'share' | 'update'): Promise<A2aAgentRow> => {
  const q = db
    .select()
    .from(a2aAgents)
    .where(and(eq(a2aAgents.agentId, agentId), isNull(a2aAgents.deletedAt)))
    .limit(1);
  const [row] = lock ? await q.for(lock) : await q;
  if (!row) throw connectError('not_found', `A2A agent '${agentId}' is not in the catalog`, 'agentId');
  return row;
};

/**
 * The card at `cardUrl`, fetched and validated, with the private-address allowance of the agent as
 * it will be stored: the card URL and the JSON-RPC URL it names both follow the upstream address rule.
 */
const pin = async (
  deps: ControlDeps,
  principal: Principal,
  cardUrl: string,
  current?: { cardUrl: string; rpcUrl: string; allowPrivate: boolean },
): Promise<{ card: PinnedCard; allowPrivate: boolean }> => {
  if (!URL.canParse(cardUrl)) throw connectError('invalid_argument', "invalid field 'cardUrl': not a valid URL", 'cardUrl');
  const operator = deps.upstreamAllowPrivate === true;
  const prior = current ? { urls: new Map([['cardUrl', current.cardUrl]]), allowPrivate: current.allowPrivate } : undefined;
  const cardAllowed = await checkUpstreamUrls(principal, operator, new Map([['cardUrl', cardUrl]]), prior);
  let card: PinnedCard;
  try {
    card = await fetchCard(cardUrl, true);
  } catch (e) {
    if (!(e instanceof CardError)) throw e;
    const code = e.reason === 'unreachable' ? 'failed_precondition' : e.reason === 'inward' ? 'permission_denied' : 'invalid_argument';
    throw connectError(code, `invalid field 'cardUrl': ${e.message}`, 'cardUrl');
  }
  const rpcAllowed = await checkUpstreamUrls(
    principal,
    operator,
    new Map([['cardUrl', card.rpcUrl]]),
    current ? { urls: new Map([['cardUrl', current.rpcUrl]]), allowPrivate: current.allowPrivate } : undefined,
  );
  return { card, allowPrivate: cardAllowed || rpcAllowed };
};

const pinned = (card: PinnedCard, allowPrivate: boolean) => ({
  card: card.text,
  cardSha256: card.sha256,
  name: card.name,
  skills: card.skills,
  rpcUrl: card.rpcUrl,
  allowPrivate,
  pinnedAt: new Date(),
});

const change = (agentId: string) => ({ resource: 'a2aAgent' as const, entityId: agentId });

const assignedTo = async (tx: Tx, agentId: string): Promise<string[]> => {
  const live = tx
    .select({ id: projects.id })
    .from(projects)
    .innerJoin(customers, and(eq(customers.id, projects.customerUuid), isNull(customers.deletedAt)))
    .where(isNull(projects.deletedAt));
  const rows = await tx
    .select({ customerId: projectA2aAgents.customerId, projectId: projectA2aAgents.projectId })
    .from(projectA2aAgents)
    .where(and(eq(projectA2aAgents.agentId, agentId), inArray(projectA2aAgents.projectUuid, live)))
    .orderBy(projectA2aAgents.customerId, projectA2aAgents.projectId)
    .limit(10);
  return rows.map((r) => `${r.customerId}/${r.projectId}`);
};

/** A card fetched before the write, for the card URL it was fetched from. */
interface Fetched {
  cardUrl: string;
  card: PinnedCard;
  allowPrivate: boolean;
}

/** The card fetched in `before`, checked against the row now locked: a card URL changed meanwhile is a conflict. */
const fetchedFor = (fetched: WeakMap<Request, Fetched>, request: Request, cardUrl: string): Fetched => {
  const f = fetched.get(request);
  if (!f || f.cardUrl !== cardUrl)
    throw connectError('aborted', "the agent's cardUrl changed while its card was fetched: call again", 'cardUrl');
  return f;
};

export const a2aOps = (deps: ControlDeps): OpDef[] => {
  const operator = deps.upstreamAllowPrivate === true;
  // Cards are fetched (up to 10 s) before the write transaction opens, never while it holds its locks.
  const fetched = new WeakMap<Request, Fetched>();
  const fetchFor = async (request: Request, principal: Principal, cardUrl: string, current?: A2aAgentRow): Promise<void> => {
    fetched.set(request, { cardUrl, ...(await pin(deps, principal, cardUrl, current)) });
  };
  return [
    mutation(deps, CreateA2aAgent, {
      resourceId: (i) => rid(i.agentId),
      before: async (input, { request, principal }) => {
        const authType = input.authType ?? 'none';
        checkMcpAuth({ authType, authHeader: input.authHeader ?? null, hasValue: input.authValue != null, value: input.authValue });
        await fetchFor(request, principal, input.cardUrl);
      },
      handler: async (input, { tx, change: record, request }) => {
        const authType = input.authType ?? 'none';
        const { card, allowPrivate } = fetchedFor(fetched, request, input.cardUrl);
        const row = await uniquely(
          async () => {
            const [r] = await tx
              .insert(a2aAgents)
              .values({
                agentId: input.agentId,
                cardUrl: input.cardUrl,
                ...pinned(card, allowPrivate),
                description: input.description ?? null,
                authType,
                authHeader: input.authHeader ?? null,
                authValueWrapped: input.authValue != null ? deps.secrets.wrap(input.authValue) : null,
                labels: input.labels ?? {},
              })
              .returning();
            return r as A2aAgentRow;
          },
          `A2A agent '${input.agentId}' already exists`,
          'agentId',
        );
        await record(change(row.agentId));
        return { agent: view(row, 'ACTIVE') };
      },
    }),
    op(GetA2aAgent, {
      handler: async (input) => {
        const row = await findA2aAgent(deps.db, input.agentId);
        return { agent: view(row, await stateOf(row, operator)) };
      },
    }),
    op(ListA2aAgents, {
      handler: async (input) => {
        const size = pageSizeOf(input.pageSize);
        const k = keyset(a2aAgents.createdAt, a2aAgents.id, input.pageToken);
        const rows = await deps.db
          .select()
          .from(a2aAgents)
          .where(and(isNull(a2aAgents.deletedAt), k.where))
          .orderBy(...k.order)
          .limit(size + 1);
        const p = page(rows, size);
        const states = await Promise.all(p.items.map((r) => stateOf(r, operator)));
        return { agents: p.items.map((r, i) => view(r, states[i] ?? 'UNREACHABLE')), nextPageToken: p.nextPageToken };
      },
    }),
    mutation(deps, UpdateA2aAgent, {
      resourceId: (i) => rid(i.agentId),
      before: async (input, { request, principal }) => {
        if (input.cardUrl == null) return;
        const current = await findA2aAgent(deps.db, input.agentId);
        if (input.cardUrl !== current.cardUrl) await fetchFor(request, principal, input.cardUrl, current);
      },
      handler: async (input, { tx, change: record, request }) => {
        const current = await findA2aAgent(tx, input.agentId, 'update');
        const authType = input.authType ?? current.authType;
        const authHeader = input.authHeader ?? (authType === 'header' ? current.authHeader : null);
        checkMcpAuth({
          authType,
          authHeader,
          hasValue: input.authValue != null || (authType !== 'none' && current.authValueWrapped !== null),
          value: input.authValue,
        });
        const patch: Partial<typeof a2aAgents.$inferInsert> = { authType, authHeader, updatedAt: new Date() };
        if (input.cardUrl != null && input.cardUrl !== current.cardUrl) {
          const { card, allowPrivate } = fetchedFor(fetched, request, input.cardUrl);
          Object.assign(patch, { cardUrl: input.cardUrl, ...pinned(card, allowPrivate) });
        }
        if (authType === 'none') patch.authValueWrapped = null;
        else if (input.authValue != null) patch.authValueWrapped = deps.secrets.wrap(input.authValue);
        if (input.description != null) patch.description = input.description;
        if (input.labels != null) patch.labels = input.labels;
        const [row] = await tx.update(a2aAgents).set(patch).where(eq(a2aAgents.id, current.id)).returning();
        await record(change(current.agentId));
        const updated = row as A2aAgentRow;
        return { agent: view(updated, patch.cardSha256 ? 'ACTIVE' : await stateOf(updated, operator)) };
      },
    }),
    mutation(deps, RefreshA2aAgent, {
      resourceId: (i) => rid(i.agentId),
      before: async (input, { request, principal }) => {
        const current = await findA2aAgent(deps.db, input.agentId);
        await fetchFor(request, principal, current.cardUrl, current);
      },
      handler: async (input, { tx, change: record, request }) => {
        const current = await findA2aAgent(tx, input.agentId, 'update');
        const { card, allowPrivate } = fetchedFor(fetched, request, current.cardUrl);
        const [row] = await tx
          .update(a2aAgents)
          .set({ ...pinned(card, allowPrivate), updatedAt: new Date() })
          .where(eq(a2aAgents.id, current.id))
          .returning();
        await record(change(current.agentId));
        return { agent: view(row as A2aAgentRow, 'ACTIVE') };
      },
    }),
    mutation(deps, DeleteA2aAgent, {
      resourceId: (i) => rid(i.agentId),
      handler: async (input, { tx, change: record }) => {
        const current = await findA2aAgent(tx, input.agentId, 'update');
        const users = await assignedTo(tx, current.agentId);
        if (users.length > 0)
          throw connectError(
            'failed_precondition',
            `A2A agent '${current.agentId}' is in use: assigned to ${users.join(', ')} (remove those first)`,
            'agentId',
          );
        const deletedAt = new Date();
        await tx.update(a2aAgents).set({ deletedAt }).where(eq(a2aAgents.id, current.id));
        await record(change(current.agentId));
        return { deletedAt: ts(deletedAt), success: true };
      },
    }),
    ...keyedAssignmentOps(deps, {
      ops: { add: AddProjectA2aAgent, remove: RemoveProjectA2aAgent, list: ListProjectA2aAgents },
      table: projectA2aAgents,
      key: 'agentId',
      column: projectA2aAgents.agentId,
      resource: 'projectA2aAgent',
      label: 'A2A agent',
      // Held FOR SHARE to the commit: a concurrent DeleteA2aAgent waits, then sees the assignment.
      check: (tx, id) => findA2aAgent(tx, id, 'share'),
    }),
  ];
};
