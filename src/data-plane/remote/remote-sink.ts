import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, type ManagementClient } from '../../api/client.ts';
import { describeError, log } from '../../core/log.ts';
import { Spool } from '../../core/spool.ts';
import { type RecordEntry, type RecordSink, type RecordSinkStats, rowJsonWith } from '../../core/records.ts';

/**
 * The request-record sink of a separate data plane: records are shipped to the management plane
 * in batches (`PushRecords`, see control-plane/dataplane-protocol.ts). A batch that cannot be sent
 * is written to the spool (core/spool.ts: GATEWAY_DATA_DIR/record-spool, one JSON file per batch) and
 * re-sent, oldest first, once the management plane answers — across outages and restarts. The
 * management plane stores rows idempotently (by requestId), so a batch sent twice is stored once.
 * Records the management plane refuses (each named with the reason, or a whole batch it cannot
 * read) are never sent again and never dropped: they go to GATEWAY_DATA_DIR/record-refused, one
 * JSON file per refusal with the reasons, and are logged.
 */

/** A refused record: its index in the batch (none: the whole batch) and the management plane's reason. */
export interface Refusal {
  index?: number;
  message: string;
}

/** What became of a batch: 'ok' (all taken), 'retry' (keep it and send it again) or the records refused (keep them, never re-send). */
export type SendResult = 'ok' | 'retry' | { refused: Refusal[] };

/** Sends one batch (a JSON array text). */
export type BatchSender = (recordsJson: string) => Promise<SendResult>;

/**
 * Ships batches with `PushRecords` through the management client. A 400 (a batch the management
 * plane cannot read) refuses the whole batch; a 200 naming refused records refuses those. Everything
 * else — unreachable, 503 while its record store is down, a refused account — keeps the batch for
 * later. A 200 whose answer is not in the protocol's shape still means the batch was taken.
 */
export const pushRecordsWith =
  (client: Pick<ManagementClient, 'protocolText'>): BatchSender =>
  async (recordsJson) => {
    try {
      const answer = await client.protocolText('PushRecords', `{"records":${recordsJson}}`);
      if (answer.rejected === 0) return 'ok';
      const errors = answer.errors ?? [];
      // A management plane that names only some of its refusals (older versions named 20): which
      // records were taken is unknown, so the whole batch is kept (re-sending what was taken is harmless).
      if (errors.length < answer.rejected)
        return {
          refused: [
            {
              message: `${answer.rejected} of the batch refused, ${errors.length} named; first: ${errors[0]?.message ?? 'no reason given'}`,
            },
          ],
        };
      return { refused: errors };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status === 200) {
        log.every(
          'records-remote-answer',
          'warn',
          'the management plane took a batch of request records with an unexpected answer',
          { error: e.message },
          60_000,
        );
        return 'ok';
      }
      return e.status === 400 ? { refused: [{ message: e.detail.message ?? e.message }] } : 'retry';
    }
  };

/**
 * What is kept of a refusal: `{refusedAt, refusals: [{index?, message}], records}` where `records`
 * are the refused records (indexes into them), or the whole batch as sent (its text, when it was
 * not a JSON array), and how many records that is.
 */
const refusedText = (text: string, rows: number, refused: readonly Refusal[]): { text: string; rows: number } => {
  const refusedAt = new Date().toISOString();
  let batch: unknown;
  try {
    batch = JSON.parse(text);
  } catch {
    batch = undefined;
  }
  const whole = refused.some((r) => r.index === undefined);
  if (whole || !Array.isArray(batch)) return { text: JSON.stringify({ refusedAt, refusals: refused, records: batch ?? text }), rows };
  const records: unknown[] = batch;
  const picked = refused.filter((r) => r.index !== undefined && r.index < records.length);
  return {
    text: JSON.stringify({
      refusedAt,
      refusals: picked.map((r, i) => ({ index: i, message: r.message })),
      records: picked.map((r) => records[r.index ?? 0]),
    }),
    rows: picked.length,
  };
};

export interface RemoteSinkStats extends RecordSinkStats {
  /** Batches on disk waiting for the management plane. */
  spooledBatches: number;
  sent: number;
  /** Records the management plane refused, kept in GATEWAY_DATA_DIR/record-refused (not sent again). */
  refused: number;
}

/** A record entry as one JSON object keyed by column names (bodies embedded as the JSON they are). */
export const recordJson = (e: RecordEntry): string =>
  rowJsonWith(
    e.row,
    `"request_body":${e.requestBody ?? 'null'},"response_body":${e.responseBody ?? 'null'},"sanitized":${e.sanitized === null ? 'null' : JSON.stringify(e.sanitized)}`,
  );

export class RemoteRecordSink implements RecordSink {
  #queue: RecordEntry[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #flushing: Promise<void> | undefined;
  #down = false;
  #stopped = false;
  #stats = { sent: 0, dropped: 0, refused: 0 };
  readonly #spool: Spool;
  /** Refused records, kept and never sent again. */
  readonly #refused: Spool;

  constructor(
    private readonly send: BatchSender,
    dataDir: string,
    private readonly opts: { flushMs: number; maxBatch?: number } = { flushMs: 250 },
  ) {
    const dir = join(dataDir, 'record-spool');
    mkdirSync(dir, { recursive: true });
    // Batches spooled by versions whose file names did not carry their row count.
    this.#spool = new Spool(dir, (text) => (text.match(/"request_id":/g) ?? []).length);
    this.#refused = new Spool(join(dataDir, 'record-refused'));
  }

  get stats(): RemoteSinkStats {
    let queuedBodyChars = 0;
    for (const e of this.#queue) queuedBodyChars += (e.requestBody?.length ?? 0) + (e.responseBody?.length ?? 0);
    const spooled = this.#spool.stats;
    return {
      queued: this.#queue.length,
      queuedBodyChars,
      sanitized: 0,
      bodiesDropped: 0,
      spooled: spooled.rows,
      spooledBytes: spooled.bytes,
      spooledBatches: spooled.batches,
      ...this.#stats,
      storeDown: this.#down,
    };
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), this.opts.flushMs);
    this.#timer.unref?.();
  }

  get #maxBatch(): number {
    return this.opts.maxBatch ?? 1000;
  }

  add(entry: RecordEntry): void {
    this.#queue.push(entry);
    // A full batch goes at once; while a flush is in progress it is sent when that one ends (a
    // flush per request while one sends only piled up waiters, each listing the spool again).
    if (this.#queue.length >= this.#maxBatch && !this.#flushing) void this.flush();
  }

  /**
   * Sends the spool, then what was queued when the flush began; what cannot be sent is spooled.
   * Records that arrive meanwhile wait for the next interval or a full batch: sending each
   * trickle at once made a small push after every push under load (~50 a second at 5k req/s,
   * each paying a token check, a lookup and a COPY on the management plane).
   */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = undefined;
      if (!this.#stopped && !this.#down && this.#queue.length >= this.#maxBatch) void this.flush();
    });
    return this.#flushing;
  }

  async #sendCounted(text: string, rows: number): Promise<'ok' | 'retry'> {
    let r: SendResult;
    try {
      r = await this.send(text);
    } catch (e) {
      log.every(
        'records-remote-send',
        'warn',
        'sending request records to the management plane failed',
        { error: describeError(e) },
        30_000,
      );
      r = 'retry';
    }
    if (typeof r === 'object' && !this.#keepRefused(text, rows, r.refused)) r = 'retry';
    if (r === 'ok') this.#stats.sent += rows;
    if (r === 'retry' && !this.#down)
      log.warn('the management plane does not take request records now; spooling them to disk', { dir: this.#spool.dir });
    if (r !== 'retry' && this.#down) log.info('the management plane takes request records again', {});
    this.#down = r === 'retry';
    return r === 'retry' ? 'retry' : 'ok';
  }

  /**
   * Records the management plane refused: written to the refused directory with the reasons (never
   * sent again), logged with the first reason. False when they could not be written: the batch is
   * then kept as one not sent.
   */
  #keepRefused(text: string, rows: number, refused: readonly Refusal[]): boolean {
    const kept = refusedText(text, rows, refused);
    try {
      this.#refused.put(kept.text, kept.rows);
    } catch (e) {
      log.every(
        'records-refused-unwritable',
        'error',
        'request records the management plane refused could not be written to disk; kept as not sent',
        { dir: this.#refused.dir, error: describeError(e) },
        30_000,
      );
      return false;
    }
    this.#stats.refused += kept.rows;
    this.#stats.sent += rows - kept.rows;
    log.every(
      'records-remote-refused',
      'error',
      'the management plane refused request records; they are kept on disk and not sent again',
      {
        rows: kept.rows,
        reason: refused[0]?.message ?? '',
        dir: this.#refused.dir,
        refused: this.#stats.refused,
      },
      10_000,
    );
    return true;
  }

  async #drain(): Promise<void> {
    for (let b = this.#spool.oldest(); b; b = this.#spool.oldest()) {
      if ((await this.#sendCounted(b.text, b.rows)) === 'retry') break;
      this.#spool.remove(b.name);
    }
    for (let left = this.#queue.length; left > 0 && this.#queue.length > 0; ) {
      const batch = this.#queue.splice(0, Math.min(left, this.#maxBatch));
      left -= batch.length;
      const text = `[${batch.map(recordJson).join(',')}]`;
      if (this.#down) {
        this.#spool.put(text, batch.length);
        continue;
      }
      // Named now: spooled after a failed send, it still goes before what stop() spools meanwhile.
      const name = this.#spool.reserve();
      if ((await this.#sendCounted(text, batch.length)) === 'retry') this.#spool.put(text, batch.length, name);
    }
  }

  /** Stops the timer, sends what it can until the deadline, spools the rest (nothing is lost). */
  async stop(withinMs = 5_000): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await Promise.race([this.flush(), Bun.sleep(withinMs)]);
    if (this.#queue.length > 0) {
      const rest = this.#queue.splice(0);
      this.#spool.put(`[${rest.map(recordJson).join(',')}]`, rest.length);
    }
  }
}
