import { and, eq, gt, lt, type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { JsonObject } from '../canonical/types.ts';
import { isDatabaseUnavailable } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';
import { type ConversationStore, itemIdsOf, type StoredConversation } from '../core/conversation-store.ts';
import type { Db } from '../store/db.ts';
import { dollarQuoted, type Exec, execOf } from '../store/pglite.ts';
import { storedConversationItems, storedConversations } from '../store/schema/index.ts';

/**
 * The ConversationStore of the embedded data plane: the management plane's database, the same
 * one a remote data plane reaches through the management plane's API. Rows live for `retentionMs`
 * (GATEWAY_RESPONSE_RETENTION) after creation; expired rows are never read and are purged every
 * `purgeEveryMs`.
 */
interface QueuedPut {
  projectId: string;
  c: StoredConversation;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Conversations written in one transaction at most. */
const MAX_BATCH = 200;

const dialect = new PgDialect();

/** One row per conversation (a JSON array text of them, `rows`), replacing the body of an id already there. */
const insertConversations = (rows: SQL, expiresAt: SQL): SQL => sql`
  insert into stored_conversations (project_id, id, kind, body, expires_at)
  select project_id, id, kind, body, ${expiresAt}::timestamptz
  from jsonb_to_recordset(${rows}::jsonb) as x(project_id uuid, id text, kind text, body jsonb)
  on conflict (project_id, id) do update set kind = excluded.kind, body = excluded.body, expires_at = excluded.expires_at`;

/** The referable items (immutable: the first one of an id stays). */
const insertItems = (items: SQL, expiresAt: SQL): SQL => sql`
  insert into stored_conversation_items (project_id, item_id, conversation_id, item, expires_at)
  select project_id, item_id, conversation_id, item, ${expiresAt}::timestamptz
  from jsonb_to_recordset(${items}::jsonb) as x(project_id uuid, item_id text, conversation_id text, item jsonb)
  on conflict do nothing`;

export class DbConversationStore implements ConversationStore {
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #queue: QueuedPut[] = [];
  #scheduled = false;
  #writing = false;
  /** The embedded PGlite's `exec` (reads and writes skip drizzle's ~1 ms per query there), or undefined on PostgreSQL. */
  readonly #exec: Exec | undefined;

  constructor(
    private readonly db: Db,
    private readonly retentionMs: number,
  ) {
    this.#exec = execOf(db);
  }

  async get(projectId: string, id: string): Promise<StoredConversation | undefined> {
    if (this.#exec) return this.#one<StoredConversation>('body', 'stored_conversations', projectId, 'id', id);
    const rows = await this.db
      .select({ body: storedConversations.body })
      .from(storedConversations)
      .where(
        and(eq(storedConversations.projectId, projectId), eq(storedConversations.id, id), gt(storedConversations.expiresAt, new Date())),
      )
      .limit(1);
    return rows[0]?.body as StoredConversation | undefined;
  }

  async getItem(projectId: string, itemId: string): Promise<JsonObject | undefined> {
    if (this.#exec) return this.#one<JsonObject>('item', 'stored_conversation_items', projectId, 'item_id', itemId);
    const rows = await this.db
      .select({ item: storedConversationItems.item })
      .from(storedConversationItems)
      .where(
        and(
          eq(storedConversationItems.projectId, projectId),
          eq(storedConversationItems.itemId, itemId),
          gt(storedConversationItems.expiresAt, new Date()),
        ),
      )
      .limit(1);
    return rows[0]?.item;
  }

  /**
   * A live row's jsonb column on PGlite, in one `exec` (the simple protocol: one round trip into
   * WebAssembly instead of the extended protocol's four). Values are dollar-quoted literals; the
   * casts refuse what the parameterised query refuses (a project id that is not a uuid). Written
   * out rather than derived from the drizzle query through store/pglite-select.ts: building and
   * wrapping that query costs more than the read (915–1,090 µs per read against 372 measured).
   */
  async #one<T>(
    column: 'body' | 'item',
    table: 'stored_conversations' | 'stored_conversation_items',
    projectId: string,
    key: 'id' | 'item_id',
    value: string,
  ): Promise<T | undefined> {
    const [result] = (await (this.#exec as Exec)(
      `select ${column} as v from ${table} where project_id = ${dollarQuoted(projectId)}::uuid and ${key} = ${dollarQuoted(value)} and expires_at > ${dollarQuoted(new Date().toISOString())}::timestamptz limit 1`,
    )) as { rows: { v: T }[] }[];
    return result?.rows[0]?.v;
  }

  /**
   * Queues the write; resolves when it is committed. Writes queued while one batch is being written
   * go together in the next (one transaction of two multi-row inserts instead of a transaction per
   * answer); a batch the database refuses is retried row by row, so one bad row fails only itself.
   */
  put(projectId: string, c: StoredConversation): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ projectId, c, resolve, reject });
      if (this.#queue.length >= MAX_BATCH) void this.#flush();
      else this.#flushSoon();
    });
  }

  #flushSoon(): void {
    if (this.#scheduled || this.#writing) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    if (this.#writing || this.#queue.length === 0) return;
    this.#writing = true;
    const batch = this.#queue.splice(0, MAX_BATCH);
    try {
      await this.#write(batch);
      for (const w of batch) w.resolve();
    } catch (e) {
      // The database is away: every write of the batch fails alike (no row-by-row retry).
      if (isDatabaseUnavailable(e)) for (const w of batch) w.reject(e);
      else for (const w of batch) await this.#write([w]).then(w.resolve, w.reject);
    } finally {
      this.#writing = false;
      if (this.#queue.length > 0) this.#flushSoon();
    }
  }

  async #write(batch: readonly QueuedPut[]): Promise<void> {
    const expiresAt = new Date(Date.now() + this.retentionMs).toISOString();
    // One row per conversation (the last write of an id in the batch wins: ON CONFLICT DO UPDATE
    // may not touch a row twice in one statement); items are immutable, the first one stays.
    // Each table's rows travel as one JSON array text the database takes apart (one parameter,
    // not five per row).
    const rows = new Map<string, string>();
    const items: string[] = [];
    for (const { projectId, c } of batch) {
      rows.set(`${projectId}\u0000${c.id}`, JSON.stringify({ project_id: projectId, id: c.id, kind: c.kind, body: c }));
      if (c.kind === 'response') {
        for (const item of itemIdsOf(c))
          items.push(JSON.stringify({ project_id: projectId, item_id: String(item.id), conversation_id: c.id, item }));
      }
    }
    const rowsJson = `[${[...rows.values()].join(',')}]`;
    const itemsJson = items.length === 0 ? undefined : `[${items.join(',')}]`;
    const exec = this.#exec;
    if (exec) {
      // The embedded store: both statements in one round trip of the simple protocol (an implicit
      // transaction: both or neither), the JSON as dollar-quoted literals.
      const expires = sql.raw(`'${expiresAt}'`);
      const text = [
        insertConversations(sql.raw(dollarQuoted(rowsJson)), expires),
        ...(itemsJson ? [insertItems(sql.raw(dollarQuoted(itemsJson)), expires)] : []),
      ]
        .map((q) => dialect.sqlToQuery(q).sql)
        .join(';\n');
      await exec(text);
      return;
    }
    await this.db.transaction(async (tx) => {
      await tx.execute(insertConversations(sql`${rowsJson}`, sql`${expiresAt}`));
      if (itemsJson) await tx.execute(insertItems(sql`${itemsJson}`, sql`${expiresAt}`));
    });
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const gone = await tx
        .delete(storedConversations)
        .where(
          and(eq(storedConversations.projectId, projectId), eq(storedConversations.id, id), gt(storedConversations.expiresAt, new Date())),
        )
        .returning({ id: storedConversations.id });
      await tx
        .delete(storedConversationItems)
        .where(and(eq(storedConversationItems.projectId, projectId), eq(storedConversationItems.conversationId, id)));
      return gone.length > 0;
    });
  }

  /** Deletes expired conversations and items; returns how many conversations went. */
  async purge(now = new Date()): Promise<number> {
    await this.db.delete(storedConversationItems).where(lt(storedConversationItems.expiresAt, now));
    const gone = await this.db
      .delete(storedConversations)
      .where(lt(storedConversations.expiresAt, now))
      .returning({ id: storedConversations.id });
    return gone.length;
  }

  start(purgeEveryMs: number): void {
    this.#timer = setInterval(() => {
      this.purge().catch((e: unknown) =>
        log.every('conversation-purge', 'warn', 'purging expired stored conversations failed', { error: describeError(e) }),
      );
    }, purgeEveryMs);
    this.#timer.unref?.();
  }

  /** Stops the purge and writes what is queued. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    while (this.#queue.length > 0 || this.#writing) {
      if (!this.#writing) await this.#flush();
      else await new Promise((r) => setImmediate(r));
    }
  }
}
