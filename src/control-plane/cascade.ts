import { and, eq, inArray, isNull } from 'drizzle-orm';
import {
  apiKeys,
  byokKeys,
  type CustomerRow,
  customers,
  dataplanes,
  projectGatewayProjects,
  projectGateways,
  projectMcpServers,
  projectMembers,
  projectModels,
  projectProviders,
  type ProjectRow,
  projects,
  projectSettings,
  budgets,
  guardrails,
  mcpProfiles,
  mcpServerCredentials,
  providerConnections,
  routes,
  serviceAccounts,
  userTokens,
} from '../store/schema/index.ts';
import type { Tx } from './deps.ts';
import { lockCustomer, lockProject } from './lookups.ts';

/**
 * Soft-delete cascades, atomic with the delete itself. Children are found by their parent's row id
 * (never by slug), and the parents are locked FOR UPDATE first: a create/attach path holds its
 * parent FOR SHARE from its check to its commit (see lookups.ts), so every child row is either
 * committed before the cascade reads (and is cascaded) or refused after it (the parent is gone).
 *
 * Deleting a project: its routes and provider connections are soft-deleted, its API keys, BYOK keys and user
 * tokens revoked, its assignments (members, models, providers, MCP servers, settings), MCP profiles, MCP server credentials and gateway
 * attachments removed — so the project's keys stop working, and a project later re-created with
 * the same slug (another row) starts empty.
 */
const cascadeProject = async (tx: Tx, project: ProjectRow, at: Date): Promise<void> => {
  const id = project.id;
  await tx.update(routes).set({ deletedAt: at }).where(and(eq(routes.projectUuid, id), isNull(routes.deletedAt)));
  await tx.update(providerConnections).set({ deletedAt: at }).where(and(eq(providerConnections.projectUuid, id), isNull(providerConnections.deletedAt)));
  await tx.update(apiKeys).set({ revokedAt: at }).where(and(eq(apiKeys.projectUuid, id), isNull(apiKeys.revokedAt)));
  await tx.update(byokKeys).set({ revokedAt: at, updatedAt: at }).where(and(eq(byokKeys.projectUuid, id), isNull(byokKeys.revokedAt)));
  await tx
    .update(userTokens)
    .set({ revokedAt: at, revokedReason: 'project deleted' })
    .where(and(eq(userTokens.projectUuid, id), isNull(userTokens.revokedAt)));
  await tx.delete(projectMembers).where(eq(projectMembers.projectUuid, id));
  await tx.delete(projectModels).where(eq(projectModels.projectUuid, id));
  await tx.delete(projectProviders).where(eq(projectProviders.projectUuid, id));
  await tx.delete(projectMcpServers).where(eq(projectMcpServers.projectUuid, id));
  await tx.delete(mcpProfiles).where(eq(mcpProfiles.projectUuid, id));
  await tx.delete(mcpServerCredentials).where(eq(mcpServerCredentials.projectUuid, id));
  await tx.delete(projectSettings).where(eq(projectSettings.projectUuid, id));
  await tx.delete(budgets).where(eq(budgets.projectUuid, id));
  await tx.delete(guardrails).where(eq(guardrails.projectUuid, id));
  await tx.delete(projectGatewayProjects).where(eq(projectGatewayProjects.projectUuid, id));
  await tx.update(projects).set({ deletedAt: at, updatedAt: at }).where(eq(projects.id, id));
};

/** Locks the project (and its customer) and cascades its delete; not_found when it is gone. */
export const cascadeProjectDelete = async (tx: Tx, customerId: string, projectId: string, at: Date): Promise<ProjectRow> => {
  const project = await lockProject(tx, customerId, projectId, 'projectId', 'update');
  await cascadeProject(tx, project, at);
  return project;
};

/**
 * Revokes the live service accounts of a workspace (data plane) being deleted: its JWTs are refused
 * at once and its key leaves the JWKS, and a workspace later re-created with the same slug does not
 * take the old accounts.
 */
export const revokeWorkspaceAccounts = async (tx: Tx, customerUuid: string, workspaceId: string, at: Date, reason: string): Promise<void> => {
  await tx
    .update(serviceAccounts)
    .set({ revokedAt: at, revokeReason: reason })
    .where(and(eq(serviceAccounts.customerUuid, customerUuid), eq(serviceAccounts.workspaceId, workspaceId), isNull(serviceAccounts.revokedAt)));
};

/**
 * Deleting a customer soft-deletes it and everything it owns: its projects (with their cascade),
 * data planes / workspaces and project gateways, and revokes its user tokens and service accounts. The customer and all
 * its live projects are locked FOR UPDATE before anything is read. The slug may then be reused by a
 * new customer (another row: nothing of the old one attaches to it).
 */
export const cascadeCustomerDelete = async (tx: Tx, customerId: string, at: Date): Promise<CustomerRow> => {
  const customer = await lockCustomer(tx, customerId, 'customerId', 'update');
  const live = await tx
    .select()
    .from(projects)
    .where(and(eq(projects.customerUuid, customer.id), isNull(projects.deletedAt)))
    .orderBy(projects.id)
    .for('update');
  for (const p of live) await cascadeProject(tx, p, at);
  const gateways = await tx
    .select({ id: projectGateways.id })
    .from(projectGateways)
    .where(and(eq(projectGateways.customerUuid, customer.id), isNull(projectGateways.deletedAt)));
  if (gateways.length > 0) {
    const ids = gateways.map((g) => g.id);
    await tx.delete(projectGatewayProjects).where(inArray(projectGatewayProjects.gatewayId, ids));
    await tx.update(projectGateways).set({ deletedAt: at, updatedAt: at }).where(inArray(projectGateways.id, ids));
  }
  await tx.update(dataplanes).set({ deletedAt: at, updatedAt: at }).where(and(eq(dataplanes.customerUuid, customer.id), isNull(dataplanes.deletedAt)));
  await tx
    .update(userTokens)
    .set({ revokedAt: at, revokedReason: 'customer deleted' })
    .where(and(eq(userTokens.customerUuid, customer.id), isNull(userTokens.revokedAt)));
  await tx
    .update(serviceAccounts)
    .set({ revokedAt: at, revokeReason: 'customer deleted' })
    .where(and(eq(serviceAccounts.customerUuid, customer.id), isNull(serviceAccounts.revokedAt)));
  await tx.update(customers).set({ deletedAt: at, updatedAt: at }).where(eq(customers.id, customer.id));
  return customer;
};
