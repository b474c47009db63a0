import { and, eq, inArray, isNull } from 'drizzle-orm';
import { projectMembers, projects, scimGroups, userTokens } from '../../store/schema/index.ts';
import type { Tx } from '../deps.ts';
import type { MutationCtx } from '../mutation.ts';

/**
 * From SCIM groups to project memberships (contract §16): a group whose displayName is
 * `{projectId}:{role}` (role `admin` or `member`, the project one of the customer's) makes its
 * members project members with that role (admin wins over member). The memberships of projects
 * such groups name follow the groups; a deactivated or deleted user loses every membership of the
 * customer, and its user tokens are revoked (a change row: data planes refuse them within the
 * propagation time, the management API at once).
 */

export const GROUP_NAME = /^([^:\s]+):(admin|member)$/;

export interface SyncedUser {
  /** The scim_users id (group members name it). */
  id: string;
  userName: string;
  /** false: deactivated or deleted. */
  active: boolean;
}

interface Customer {
  customerUuid: string;
  customerId: string;
}

export const syncMemberships = async (
  tx: Tx,
  change: MutationCtx['change'],
  customer: Customer,
  users: readonly SyncedUser[],
  /** Group names that no longer exist (renamed, deleted): their projects follow the groups too. */
  formerGroupNames: readonly string[] = [],
): Promise<void> => {
  if (users.length === 0) return;
  const groups = await tx.select().from(scimGroups).where(eq(scimGroups.customerUuid, customer.customerUuid));
  const live = await tx
    .select({ id: projects.id, projectId: projects.projectId })
    .from(projects)
    .where(and(eq(projects.customerUuid, customer.customerUuid), isNull(projects.deletedAt)));
  const byProject = new Map(live.map((p) => [p.projectId, p]));
  const named = new Map<string, { projectUuid: string; projectId: string; role: 'admin' | 'member'; members: string[] }[]>();
  const managed = new Set<string>();
  for (const g of groups) {
    const m = GROUP_NAME.exec(g.displayName);
    const project = m ? byProject.get(m[1] ?? '') : undefined;
    if (!m || !project) continue;
    managed.add(project.id);
    const list = named.get(project.id) ?? [];
    list.push({ projectUuid: project.id, projectId: project.projectId, role: m[2] === 'admin' ? 'admin' : 'member', members: g.members });
    named.set(project.id, list);
  }
  for (const name of formerGroupNames) {
    const project = byProject.get(GROUP_NAME.exec(name)?.[1] ?? '');
    if (project && GROUP_NAME.test(name)) managed.add(project.id);
  }
  for (const u of users) {
    const scope = u.active ? [...managed] : live.map((p) => p.id);
    const desired = new Map<string, 'admin' | 'member'>();
    if (u.active)
      for (const [projectUuid, list] of named)
        for (const g of list) if (g.members.includes(u.id) && desired.get(projectUuid) !== 'admin') desired.set(projectUuid, g.role);
    const current =
      scope.length === 0
        ? []
        : await tx
            .select()
            .from(projectMembers)
            .where(and(eq(projectMembers.userId, u.userName), inArray(projectMembers.projectUuid, scope)));
    const rows = new Map(current.map((r) => [r.projectUuid, r]));
    for (const projectUuid of scope) {
      const want = desired.get(projectUuid);
      const row = rows.get(projectUuid);
      const projectId = live.find((p) => p.id === projectUuid)?.projectId ?? '';
      const record = () => change({ resource: 'projectMember', entityId: u.userName, customerId: customer.customerId, projectId });
      if (want && !row) {
        await tx.insert(projectMembers).values({ projectUuid, customerId: customer.customerId, projectId, userId: u.userName, role: want });
        await record();
      } else if (want && row && row.role !== want) {
        await tx.update(projectMembers).set({ role: want, updatedAt: new Date() }).where(eq(projectMembers.id, row.id));
        await record();
      } else if (!want && row) {
        await tx.delete(projectMembers).where(eq(projectMembers.id, row.id));
        await record();
      }
    }
    if (!u.active) await revokeTokensOf(tx, change, customer, u.userName);
  }
};

/** Revokes a user's live user tokens in the customer. */
const revokeTokensOf = async (tx: Tx, change: MutationCtx['change'], customer: Customer, userName: string): Promise<void> => {
  const revoked = await tx
    .update(userTokens)
    .set({ revokedAt: new Date(), revokedReason: 'deprovisioned by SCIM' })
    .where(and(eq(userTokens.customerUuid, customer.customerUuid), eq(userTokens.userId, userName), isNull(userTokens.revokedAt)))
    .returning({ jti: userTokens.jti });
  for (const r of revoked) await change({ resource: 'userToken', entityId: r.jti, customerId: customer.customerId });
};
