import { existsSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq, inArray, like, lt } from 'drizzle-orm';
import { describeError, log } from '../core/log.ts';
import { parseRecordRetention } from '../governance/setting-values.ts';
import type { Db } from '../store/db.ts';
import { storedConversationItems, storedConversations } from '../store/schema/conversations.ts';
import { projectSettings, projects, requestRecords } from '../store/schema/index.ts';
import { parseBodiesAt } from './body-files.ts';

/**
 * The `days` of each project's `record-retention` setting (contract §8): records older than that
 * are deleted, with their bodies, within an hour of expiry (the sweep runs every `everyMs`, 10
 * minutes by default), in batches of `batch` rows — each its own short statement over the
 * received_at index, so the table is never held. The project's stored Responses and Messages
 * threads follow the same clock (created more than `days` ago: gone, whatever
 * GATEWAY_RESPONSE_RETENTION says). Bodies kept beside the rows (body-files.ts) go with the
 * segment files: a segment no row points into any more is deleted once it is closed.
 */

export interface RetentionOptions {
  everyMs?: number;
  batch?: number;
  /** The body-files directory of the embedded store, when bodies are kept beside the rows. */
  bodiesDir?: string;
  /** GATEWAY_RESPONSE_RETENTION: a stored conversation's expires_at is its creation plus this. */
  responseRetentionMs: number;
  /** A segment younger than this may still be written to (body-files segmentMs plus the flush lag). */
  segmentOpenMs?: number;
}

const DAY_MS = 86_400_000;

export class RecordRetention {
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<number> | undefined;
  readonly #batch: number;
  readonly #segmentOpenMs: number;

  constructor(
    readonly db: Db,
    readonly opts: RetentionOptions,
  ) {
    this.#batch = opts.batch ?? 5000;
    this.#segmentOpenMs = opts.segmentOpenMs ?? 2 * 3_600_000;
  }

  /** One sweep over every project with `days`; resolves to the records deleted. */
  purge(now = Date.now()): Promise<number> {
    this.#running ??= this.#purge(now).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #purge(now: number): Promise<number> {
    const rows = await this.db
      .select({ id: projects.id, customerId: projects.customerId, projectId: projects.projectId, value: projectSettings.settingValue })
      .from(projectSettings)
      .innerJoin(projects, eq(projects.id, projectSettings.projectUuid))
      .where(eq(projectSettings.settingName, 'record-retention'));
    let deleted = 0;
    const segments = new Set<string>();
    for (const r of rows) {
      const parsed = parseRecordRetention(r.value);
      if (!parsed.ok || parsed.value.days === undefined) continue;
      const cutoff = new Date(now - parsed.value.days * DAY_MS);
      for (;;) {
        const expired = this.db
          .select({ id: requestRecords.requestId })
          .from(requestRecords)
          .where(
            and(
              lt(requestRecords.receivedAt, cutoff),
              eq(requestRecords.customerId, r.customerId),
              eq(requestRecords.projectId, r.projectId),
            ),
          )
          .limit(this.#batch);
        const gone = await this.db
          .delete(requestRecords)
          .where(inArray(requestRecords.requestId, expired))
          .returning({ bodiesAt: requestRecords.bodiesAt });
        deleted += gone.length;
        for (const g of gone) {
          const at = g.bodiesAt ? parseBodiesAt(g.bodiesAt) : undefined;
          if (at) segments.add(at.segment);
        }
        if (gone.length < this.#batch) break;
      }
      // Stored conversations: created = expires_at - GATEWAY_RESPONSE_RETENTION.
      const createdBefore = new Date(cutoff.getTime() + this.opts.responseRetentionMs);
      await this.db
        .delete(storedConversationItems)
        .where(and(eq(storedConversationItems.projectId, r.id), lt(storedConversationItems.expiresAt, createdBefore)));
      await this.db
        .delete(storedConversations)
        .where(and(eq(storedConversations.projectId, r.id), lt(storedConversations.expiresAt, createdBefore)));
    }
    if (this.opts.bodiesDir) await this.#dropSegments(segments, now);
    return deleted;
  }

  /** Deletes closed segment files no record points into any more. */
  async #dropSegments(touched: ReadonlySet<string>, now: number): Promise<void> {
    const dir = this.opts.bodiesDir;
    if (!dir || touched.size === 0 || !existsSync(dir)) return;
    const present = new Set(readdirSync(dir));
    for (const seg of touched) {
      if (!present.has(seg)) continue;
      const path = join(dir, seg);
      if (now - statSync(path).mtimeMs < this.#segmentOpenMs) continue;
      const used = await this.db
        .select({ id: requestRecords.requestId })
        .from(requestRecords)
        .where(like(requestRecords.bodiesAt, `${seg}:%`))
        .limit(1);
      if (used.length === 0) unlinkSync(path);
    }
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.purge().catch((e: unknown) =>
        log.every('record-retention', 'warn', 'purging expired request records failed', { error: describeError(e) }),
      );
    }, this.opts.everyMs ?? 600_000);
    this.#timer.unref?.();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }
}
