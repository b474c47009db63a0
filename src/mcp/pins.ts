import { createHash } from 'node:crypto';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { describeError, log } from '../core/log.ts';
import type { McpProfileConfig, McpProfileServer } from './config.ts';

/**
 * Pinned tools (contract §7.1). A `pin: true` server of a profile has each tool's definition
 * (name, description, input and output schema) pinned when first listed: the management plane
 * keeps the approved hash of each and the document carries them (`pins` of the entry). A listed
 * tool whose hash is not its pin (changed, or added since) is left out of lists and refused on
 * call until ApproveMcpTools; a pinned tool no longer listed is pending as removed.
 *
 * What a data plane lists of a pinned server is reported to the management plane (`McpPinSink`)
 * when it differs from the last report of this process: it records what was seen, pins it when the
 * server had never been listed, and GetMcpProfile shows the difference as `pendingTools`. Before
 * the first pins reach this data plane in a document, the definitions it reported stand in for
 * them, so a change in that window is caught too.
 */

/** A tool as the data plane saw it: its name at the server and its definition's hash. */
export interface SeenTool {
  name: string;
  hash: string;
}

/** Where a data plane reports what it listed of a pinned server (the management plane). */
export interface McpPinSink {
  seen(report: { profileUuid: string; serverId: string; tools: readonly SeenTool[] }): Promise<void>;
}

/** Sorted keys at every depth: one definition, one text, whatever order the server wrote it in. */
const canonical = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(canonical);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = canonical(Reflect.get(v, k));
  return out;
};

/** The hash of a tool's definition: name, description, input and output schema (sha256, hex). */
export const toolHash = (t: Pick<Tool, 'name' | 'description' | 'inputSchema' | 'outputSchema'>): string =>
  createHash('sha256')
    .update(
      JSON.stringify(
        canonical({ name: t.name, description: t.description ?? null, inputSchema: t.inputSchema, outputSchema: t.outputSchema ?? null }),
      ),
    )
    .digest('hex');

/** The refusal of a call to a tool whose definition is not the approved one. */
export const notApproved = (listed: string): McpError =>
  new McpError(
    ErrorCode.InvalidParams,
    `Tool ${listed}: its definition changed since it was pinned (or it is new) and needs approval (ApproveMcpTools) before it can be called.`,
    { code: 'mcp_tool_not_approved', tool: listed },
  );

export class PinBook {
  /** What this process last reported, by `${profileUuid}\n${serverId}`: the digest and the tools. */
  readonly #reported = new Map<string, { digest: string; pins: ReadonlyMap<string, string> }>();

  constructor(private readonly sink: McpPinSink | undefined) {}

  /** The approved hashes of a pinned entry: the document's, else what this process reported first. */
  #pins(profile: McpProfileConfig, entry: McpProfileServer): ReadonlyMap<string, string> | undefined {
    if (entry.pins) return entry.pins;
    return this.#reported.get(`${profile.id}\n${entry.serverId}`)?.pins;
  }

  /**
   * The names (at the server) of a pinned entry's listed tools that may be shown and called: those
   * whose definition is the pinned one. Reports what was seen when it differs from the last report.
   * For an entry without `pin`, every name.
   */
  approved(profile: McpProfileConfig, entry: McpProfileServer, tools: readonly Tool[]): Set<string> {
    if (!entry.pin) return new Set(tools.map((t) => t.name));
    const seen = tools.map((t) => ({ name: t.name, hash: toolHash(t) })).sort((a, b) => (a.name < b.name ? -1 : 1));
    const key = `${profile.id}\n${entry.serverId}`;
    const digest = JSON.stringify(seen);
    const before = this.#pins(profile, entry);
    const last = this.#reported.get(key);
    if (last?.digest !== digest) {
      // First listing with no pins anywhere yet: what is seen now is what gets pinned.
      this.#reported.set(key, { digest, pins: before ?? new Map(seen.map((s) => [s.name, s.hash])) });
      this.sink?.seen({ profileUuid: profile.id, serverId: entry.serverId, tools: seen }).catch((e: unknown) => {
        // Reported again at the next listing (the pins this process holds stay).
        const cur = this.#reported.get(key);
        if (cur?.digest === digest) this.#reported.set(key, { ...cur, digest: '' });
        log.warn('mcp pinned tools not reported', { profile: profile.profileId, server: entry.serverId, error: describeError(e) });
      });
    }
    const pins = this.#pins(profile, entry);
    if (!pins) return new Set();
    const out = new Set<string>();
    const held: string[] = [];
    for (const s of seen) {
      if (pins.get(s.name) === s.hash) out.add(s.name);
      else held.push(s.name);
    }
    if (held.length > 0)
      log.info('mcp tools held for approval', { profile: profile.profileId, server: entry.serverId, tools: held.slice(0, 20).join(', ') });
    return out;
  }
}
