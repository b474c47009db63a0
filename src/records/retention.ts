import { existsSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq, inArray, like, lt, sql } from 'drizzle-orm';
import { describeError, log } from '../core/log.ts';
import { parseRecordRetention } from '../governance/setting-values.ts';
import type { Db } from '../store/db.ts';
import { storedConversationItems, storedConversations } from '../store/schema/conversations.ts';
import { projectSettings, projects, requestRecords } from '../store/schema/index.ts';
import { parseBodiesAt } from './body-files.ts';
import { dropExpiredPartitions, ensurePartitions, retentionKey } from './partitions.ts';

/**
 * The `days` of each project's `record-retention` setting (contract §8): records older than that
 * are deleted, with their bodies, within an hour of expiry (the sweep runs every `everyMs`, 10
 * minutes by default). Each sweep first creates the coming days' partitions and drops every whole
 * day partition past the retention of all the projects in it (partitions.ts: no row is deleted
 * one by one); what is left — the expired part of the day at the cutoff, a project whose retention
 * is shorter than its neighbours' in the same partition, late records in the default partition —
 * is deleted in batches of `batch` rows, each its own short statement over the received_at index,
 * so the table is never held. The project's stored Responses and Messages
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

export interface Sweep {
  deleted: number;
  partitionsDropped: number;
  rowsInDroppedPartitions: number;
}

export class RecordRetention {
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<Sweep> | undefined;
  readonly #batch: number;
  readonly #segmentOpenMs: number;

  constructor(
    readonly db: Db,
    readonly opts: RetentionOptions,
  ) {
    this.#batch = opts.batch ?? 5000;
    this.#segmentOpenMs = opts.segmentOpenMs ?? 2 * 3_600_000;
  }

  /** One sweep over every project with `days`; resolves to the records deleted (with those of dropped partitions). */
  async purge(now = Date.now()): Promise<number> {
    return (await this.sweep(now)).deleted;
  }

  /** One sweep, and what it did: the records deleted in all, and the partitions dropped with their records. */
  sweep(now = Date.now()): Promise<Sweep> {
    this.#running ??= this.#purge(now).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #purge(now: number): Promise<Sweep> {
    const rows = await this.db
      .select({ id: projects.id, customerId: projects.customerId, projectId: projects.projectId, value: projectSettings.settingValue })
      .from(projectSettings)
      .innerJoin(projects, eq(projects.id, projectSettings.projectUuid))
      .where(eq(projectSettings.settingName, 'record-retention'));
    const days = new Map<string, number>();
    for (const r of rows) {
      const parsed = parseRecordRetention(r.value);
      if (parsed.ok && parsed.value.days !== undefined) days.set(retentionKey(r.customerId, r.projectId), parsed.value.days);
    }
    await ensurePartitions(this.db, now);
    const dropped = await dropExpiredPartitions(this.db, now, days, this.opts.bodiesDir !== undefined);
    let deleted = dropped.rows;
    const segments = dropped.segments;
    for (const r of rows) {
      const keep = days.get(retentionKey(r.customerId, r.projectId));
      if (keep === undefined) continue;
      const cutoff = new Date(now - keep * DAY_MS);
      for (;;) {
        // By (request_id, received_at), the primary key: each id is looked up in its own day's partition.
        const expired = this.db
          .select({ id: requestRecords.requestId, at: requestRecords.receivedAt })
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
          .where(inArray(sql`(${requestRecords.requestId}, ${requestRecords.receivedAt})`, expired))
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
    return { deleted, partitionsDropped: dropped.partitions, rowsInDroppedPartitions: dropped.rows };
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

  /** Sweeps now (the coming days' partitions exist from the start), then every `everyMs`. */
  start(): void {
    this.purge().catch((e: unknown) =>
      log.every('record-retention', 'warn', 'purging expired request records failed', { error: describeError(e) }),
    );
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
