import { and, eq, gt, lt } from 'drizzle-orm';
import type { JsonObject } from '../canonical/types.ts';
import { describeError, log } from '../core/log.ts';
import { type ConversationStore, itemIdsOf, type StoredConversation } from '../data-plane/conversations.ts';
import type { Db } from '../store/db.ts';
import { storedConversationItems, storedConversations } from '../store/schema/index.ts';

/**
 * The ConversationStore of the embedded data plane: the management plane's database, the same
 * one a remote data plane reaches through the management plane's API. Rows live for `retentionMs`
 * (GATEWAY_RESPONSE_RETENTION) after creation; expired rows are never read and are purged every
 * `purgeEveryMs`.
 */
export class DbConversationStore implements ConversationStore {
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: Db,
    private readonly retentionMs: number,
  ) {}

  async get(projectId: string, id: string): Promise<StoredConversation | undefined> {
    const rows = await this.db
      .select({ body: storedConversations.body })
      .from(storedConversations)
      .where(and(eq(storedConversations.projectId, projectId), eq(storedConversations.id, id), gt(storedConversations.expiresAt, new Date())))
      .limit(1);
    return rows[0]?.body as StoredConversation | undefined;
  }

  async getItem(projectId: string, itemId: string): Promise<JsonObject | undefined> {
    const rows = await this.db
      .select({ item: storedConversationItems.item })
      .from(storedConversationItems)
      .where(and(eq(storedConversationItems.projectId, projectId), eq(storedConversationItems.itemId, itemId), gt(storedConversationItems.expiresAt, new Date())))
      .limit(1);
    return rows[0]?.item;
  }

  async put(projectId: string, c: StoredConversation): Promise<void> {
    const expiresAt = new Date(Date.now() + this.retentionMs);
    const body = c as unknown as JsonObject;
    await this.db.transaction(async (tx) => {
      await tx
        .insert(storedConversations)
        .values({ projectId, id: c.id, kind: c.kind, body, expiresAt })
        .onConflictDoUpdate({ target: [storedConversations.projectId, storedConversations.id], set: { kind: c.kind, body, expiresAt } });
      if (c.kind !== 'response') return;
      const items = itemIdsOf(c).map((item) => ({ projectId, itemId: String(item.id), conversationId: c.id, item, expiresAt }));
      if (items.length > 0) await tx.insert(storedConversationItems).values(items).onConflictDoNothing();
    });
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const gone = await tx
        .delete(storedConversations)
        .where(and(eq(storedConversations.projectId, projectId), eq(storedConversations.id, id), gt(storedConversations.expiresAt, new Date())))
        .returning({ id: storedConversations.id });
      await tx.delete(storedConversationItems).where(and(eq(storedConversationItems.projectId, projectId), eq(storedConversationItems.conversationId, id)));
      return gone.length > 0;
    });
  }

  /** Deletes expired conversations and items; returns how many conversations went. */
  async purge(now = new Date()): Promise<number> {
    await this.db.delete(storedConversationItems).where(lt(storedConversationItems.expiresAt, now));
    const gone = await this.db.delete(storedConversations).where(lt(storedConversations.expiresAt, now)).returning({ id: storedConversations.id });
    return gone.length;
  }

  start(purgeEveryMs: number): void {
    this.#timer = setInterval(() => {
      this.purge().catch((e: unknown) => log.every('conversation-purge', 'warn', 'purging expired stored conversations failed', { error: describeError(e) }));
    }, purgeEveryMs);
    this.#timer.unref?.();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
