import { and, eq, inArray, isNull } from 'drizzle-orm';
import {
  apiKeys,
  customers,
  dataplanes,
  projectGatewayProjects,
  projectGateways,
  projectMcpServers,
  projectMembers,
  projectModels,
  projectProviders,
  projects,
  projectSettings,
  providerConnections,
  routes,
} from '../store/schema/index.ts';
import type { Tx } from './deps.ts';

/**
 * Soft-delete cascades (one transaction with the delete itself).
 *
 * Deleting a project: its routes and provider connections are soft-deleted, its API keys revoked,
 * its assignments (members, models, providers, MCP servers, settings) and gateway attachments
 * removed — so the project's keys stop working, and a project later re-created with the same slug
 * starts empty.
 */
export const cascadeProjectDelete = async (tx: Tx, customerId: string, projectId: string, at: Date): Promise<void> => {
  await tx.update(routes).set({ deletedAt: at }).where(and(eq(routes.customerId, customerId), eq(routes.projectId, projectId), isNull(routes.deletedAt)));
  await tx
    .update(providerConnections)
    .set({ deletedAt: at })
    .where(and(eq(providerConnections.customerId, customerId), eq(providerConnections.projectId, projectId), isNull(providerConnections.deletedAt)));
  await tx.update(apiKeys).set({ revokedAt: at }).where(and(eq(apiKeys.customerId, customerId), eq(apiKeys.projectId, projectId), isNull(apiKeys.revokedAt)));
  await tx.delete(projectMembers).where(and(eq(projectMembers.customerId, customerId), eq(projectMembers.projectId, projectId)));
  await tx.delete(projectModels).where(and(eq(projectModels.customerId, customerId), eq(projectModels.projectId, projectId)));
  await tx.delete(projectProviders).where(and(eq(projectProviders.customerId, customerId), eq(projectProviders.projectId, projectId)));
  await tx.delete(projectMcpServers).where(and(eq(projectMcpServers.customerId, customerId), eq(projectMcpServers.projectId, projectId)));
  await tx.delete(projectSettings).where(and(eq(projectSettings.customerId, customerId), eq(projectSettings.projectId, projectId)));
  await tx.delete(projectGatewayProjects).where(and(eq(projectGatewayProjects.customerId, customerId), eq(projectGatewayProjects.projectId, projectId)));
  await tx
    .update(projects)
    .set({ deletedAt: at, updatedAt: at })
    .where(and(eq(projects.customerId, customerId), eq(projects.projectId, projectId), isNull(projects.deletedAt)));
};

/**
 * Deleting a customer soft-deletes it and everything it owns: its projects (with their cascade),
 * data planes / workspaces and project gateways. The slug may then be reused by a new customer.
 */
export const cascadeCustomerDelete = async (tx: Tx, customerId: string, at: Date): Promise<void> => {
  const live = await tx
    .select({ projectId: projects.projectId })
    .from(projects)
    .where(and(eq(projects.customerId, customerId), isNull(projects.deletedAt)));
  for (const p of live) await cascadeProjectDelete(tx, customerId, p.projectId, at);
  const gateways = await tx
    .select({ id: projectGateways.id })
    .from(projectGateways)
    .where(and(eq(projectGateways.customerId, customerId), isNull(projectGateways.deletedAt)));
  if (gateways.length > 0) {
    await tx.delete(projectGatewayProjects).where(inArray(projectGatewayProjects.gatewayId, gateways.map((g) => g.id)));
    await tx.update(projectGateways).set({ deletedAt: at, updatedAt: at }).where(inArray(projectGateways.id, gateways.map((g) => g.id)));
  }
  await tx.update(dataplanes).set({ deletedAt: at, updatedAt: at }).where(and(eq(dataplanes.customerId, customerId), isNull(dataplanes.deletedAt)));
  await tx.update(customers).set({ deletedAt: at, updatedAt: at }).where(and(eq(customers.customerId, customerId), isNull(customers.deletedAt)));
};
