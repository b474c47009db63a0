import type { JsonObject } from '../canonical/types.ts';
import {
  type BackgroundRun,
  type ConversationStore,
  itemIdsOf,
  type StoredConversation,
  type StoredConversationObject,
  type StoredResponse,
  type StoredThread,
} from '../core/conversation-store.ts';
import { BackgroundRuns } from './background-runs.ts';

export type { BackgroundRun, ConversationStore, StoredConversation, StoredConversationObject, StoredResponse, StoredThread };
export { itemIdsOf };
import { GatewayError } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';

/**
 * The store as the request path uses it. A write is answered to the client before it lands (a
 * stream's last event goes out first), so reads of an id whose write is still under way wait for
 * it: a client that sends its next turn at once finds the previous one.
 */
export class Conversations {
  readonly #pending = new Map<string, Promise<void>>();
  /** Thread replies a request of this process is continuing from now. */
  readonly #claims = new Set<string>();

  /** Claims a reply for one continue at a time (this process only); false when already claimed. */
  claim(projectId: string, id: string): boolean {
    const k = `${projectId}\u0000${id}`;
    if (this.#claims.has(k)) return false;
    this.#claims.add(k);
    return true;
  }

  release(projectId: string, id: string): void {
    this.#claims.delete(`${projectId}\u0000${id}`);
  }

  /** Background responses this process runs (data-plane/background.ts). */
  readonly runs: BackgroundRuns;

  constructor(
    readonly store: ConversationStore,
    opts: { backgroundLeaseMs?: number } = {},
  ) {
    this.runs = new BackgroundRuns(opts.backgroundLeaseMs);
  }

  async #settled(projectId: string, id: string): Promise<void> {
    const p = this.#pending.get(`${projectId}\u0000${id}`);
    if (p) await p;
  }

  async get(projectId: string, id: string): Promise<StoredConversation | undefined> {
    await this.#settled(projectId, id);
    return this.store.get(projectId, id);
  }

  async getItem(projectId: string, itemId: string): Promise<JsonObject | undefined> {
    await this.#settled(projectId, itemId);
    return this.store.getItem(projectId, itemId);
  }

  /** Starts the write; resolves when it landed. A failed write is logged (the answer was already given). */
  put(projectId: string, c: StoredConversation): Promise<void> {
    return this.write(projectId, c).catch((e: unknown) => {
      log.every('conversation-store-put', 'error', 'storing a conversation failed; later references to it will be refused', {
        error: describeError(e),
      });
    });
  }

  /** As put, but a failed write rejects (for writes the caller's answer depends on). */
  write(projectId: string, c: StoredConversation): Promise<void> {
    const keys = [c.id, ...(c.kind === 'response' ? itemIdsOf(c).map((i) => String(i.id)) : [])].map((id) => `${projectId}\u0000${id}`);
    const p = this.store.put(projectId, c);
    const settled = p.catch(() => undefined);
    for (const k of keys) this.#pending.set(k, settled);
    void settled.finally(() => {
      for (const k of keys) if (this.#pending.get(k) === settled) this.#pending.delete(k);
    });
    return p;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    await this.#settled(projectId, id);
    return this.store.delete(projectId, id);
  }
}

/** An id the gateway does not hold (or holds for another project, or expired): 404, never ignored. */
export const notStored = (what: string, id: string, param: string | null, details?: { [key: string]: string }): GatewayError =>
  new GatewayError({
    kind: 'not_found',
    message: `${what} '${id}' was not found (unknown, deleted, expired, or stored with store: false).`,
    param,
    ...(details ? { details } : {}),
  });

export const storeUnavailable = (param: string): GatewayError =>
  new GatewayError({ kind: 'invalid_request', message: 'Stored conversations are not available on this data plane.', param });
