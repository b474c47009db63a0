import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import { connectError } from '../../core/errors.ts';
import type { McpPinSink, SeenTool } from '../../mcp/pins.ts';
import { mcpProfiles, type McpProfileRow, mcpToolPins } from '../../store/schema/index.ts';
import type { Db } from '../../store/db.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { rid, systemMutation } from '../mutation.ts';

/**
 * Pinned tools on the management plane (contract §7.1): what the data planes list of a profile's
 * `pin: true` servers (`seen`), the approved definitions (`pinned_hash`, carried to every data plane
 * by the document: propagation/sections/mcp.ts), the difference (`pendingTools` of GetMcpProfile)
 * and its approval (ApproveMcpTools). A server's first report pins what it lists (a marker row
 * named '' remembers that it was listed, even with no tool), recorded as a configuration change
 * and audited as the system's.
 */

export interface PendingTool {
  serverId: string;
  name: string;
  change: 'added' | 'changed' | 'removed';
}

const pinnedServers = (row: McpProfileRow): Set<string> => new Set(row.servers.filter((s) => s.pin).map((s) => s.serverId));

/** The tools of the profile's pinned servers whose seen definition is not the approved one. */
export const pendingTools = async (db: Db | Tx, row: McpProfileRow): Promise<PendingTool[]> => {
  const pinned = pinnedServers(row);
  if (pinned.size === 0) return [];
  const rows = await db
    .select()
    .from(mcpToolPins)
    .where(
      and(
        eq(mcpToolPins.profileUuid, row.id),
        ne(mcpToolPins.name, ''),
        sql`${mcpToolPins.pinnedHash} is distinct from ${mcpToolPins.seenHash}`,
      ),
    )
    .orderBy(mcpToolPins.serverId, mcpToolPins.name);
  return rows
    .filter((r) => pinned.has(r.serverId))
    .map((r) => ({
      serverId: r.serverId,
      name: r.name,
      change: r.pinnedHash === null ? 'added' : r.seenHash === null ? 'removed' : 'changed',
    }));
};

/** Pins what was last seen of the given servers of the profile (every pinned one when none is named). */
export const approvePins = async (tx: Tx, row: McpProfileRow, serverIds: readonly string[]): Promise<void> => {
  for (const serverId of serverIds) {
    const of = and(eq(mcpToolPins.profileUuid, row.id), eq(mcpToolPins.serverId, serverId));
    await tx.delete(mcpToolPins).where(and(of, isNull(mcpToolPins.seenHash)));
    await tx
      .update(mcpToolPins)
      .set({ pinnedHash: sql`${mcpToolPins.seenHash}`, updatedAt: new Date() })
      .where(and(of, sql`${mcpToolPins.pinnedHash} is distinct from ${mcpToolPins.seenHash}`));
  }
};

/** Forgets the pins of servers the profile no longer pins (pinning again starts from the next listing). */
export const dropUnpinned = async (tx: Tx, row: McpProfileRow): Promise<void> => {
  const keep = [...pinnedServers(row)];
  await tx.delete(mcpToolPins).where(
    and(
      eq(mcpToolPins.profileUuid, row.id),
      keep.length > 0
        ? sql`${mcpToolPins.serverId} not in (${sql.join(
            keep.map((k) => sql`${k}`),
            sql`, `,
          )})`
        : undefined,
    ),
  );
};

/**
 * Records what a data plane listed of a pinned server; the first listing pins it. `servedBy`: the
 * projects a separate data plane serves (a profile of another project is refused).
 */
export const recordSeen = async (
  deps: ControlDeps,
  profileUuid: string,
  serverId: string,
  tools: readonly SeenTool[],
  servedBy?: readonly string[],
): Promise<void> => {
  await systemMutation(deps, { actionType: 'UPDATE', resourceType: 'mcp_profile', resourceId: profileUuid }, async ({ tx, change }) => {
    const [row] = await tx.select().from(mcpProfiles).where(eq(mcpProfiles.id, profileUuid)).for('update');
    if (row && servedBy && !servedBy.includes(row.projectUuid))
      throw connectError('permission_denied', "the MCP profile's project is not served by this data plane", 'profileUuid');
    // A report for a profile or server that is not (or no longer) pinned changes nothing.
    if (!row || !pinnedServers(row).has(serverId)) return undefined;
    const of = and(eq(mcpToolPins.profileUuid, profileUuid), eq(mcpToolPins.serverId, serverId));
    const existing = await tx.select({ name: mcpToolPins.name }).from(mcpToolPins).where(of);
    const first = existing.length === 0;
    const now = new Date();
    const seen = new Map(tools.map((t) => [t.name, t.hash]));
    for (const e of existing)
      if (e.name !== '' && !seen.has(e.name))
        await tx
          .update(mcpToolPins)
          .set({ seenHash: null, updatedAt: now })
          .where(and(of, eq(mcpToolPins.name, e.name)));
    const values = [...seen].map(([name, hash]) => ({
      profileUuid,
      serverId,
      name,
      seenHash: hash,
      pinnedHash: first ? hash : null,
      updatedAt: now,
    }));
    if (first) values.push({ profileUuid, serverId, name: '', seenHash: '', pinnedHash: '', updatedAt: now });
    if (values.length > 0)
      await tx
        .insert(mcpToolPins)
        .values(values)
        .onConflictDoUpdate({
          target: [mcpToolPins.profileUuid, mcpToolPins.serverId, mcpToolPins.name],
          set: { seenHash: sql`excluded.seen_hash`, updatedAt: now },
        });
    // Only the first listing changes what data planes enforce (its pins); later ones are seen only.
    if (!first) return undefined;
    await change({ resource: 'mcpProfile', entityId: row.profileId, customerId: row.customerId, projectId: row.projectId });
    return rid(row.customerId, row.projectId, row.profileId);
  });
};

/** The embedded data plane's sink: straight into the management plane's store. */
export const mcpPinSink = (deps: ControlDeps): McpPinSink => ({
  seen: ({ profileUuid, serverId, tools }) => recordSeen(deps, profileUuid, serverId, tools),
});
