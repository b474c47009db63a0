import type { McpSnapshot } from '../../mcp/config.ts';
import { mcpSnapshotOf } from '../mcp.ts';
import { perDocument, type SnapshotBuilder } from '../section.ts';

export interface McpPart {
  /** The MCP gateway's catalog servers and profiles (src/mcp/config.ts). */
  mcp: McpSnapshot;
}

/** The MCP sections (contract §7), as the snapshot carries them (propagation/mcp.ts). */
export const mcpSnapshot = {
  global: perDocument(({ doc }): McpPart => ({ mcp: mcpSnapshotOf(doc) })),
} satisfies SnapshotBuilder;
