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
 */

/** Sends one batch (a JSON array text); 'ok', 'retry' (keep it) or 'refused' (a permanent 4xx: drop it). */
export type BatchSender = (recordsJson: string) => Promise<'ok' | 'retry' | 'refused'>;

/**
 * Ships batches with `PushRecords` through the management client. Only a 400 (a batch the
 * management plane cannot read) drops a batch; everything else — unreachable, 503 while its record
 * store is down, a refused account — keeps it for later. A 200 whose answer is not in the
 * protocol's shape still means the batch was taken.
 */
export const pushRecordsWith =
  (client: Pick<ManagementClient, 'protocolText'>): BatchSender =>
  async (recordsJson) => {
    try {
      await client.protocolText('PushRecords', `{"records":${recordsJson}}`);
      return 'ok';
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status === 200) {
        log.every('records-remote-answer', 'warn', 'the management plane took a batch of request records with an unexpected answer', { error: e.message }, 60_000);
        return 'ok';
      }
      return e.status === 400 ? 'refused' : 'retry';
    }
  };

export interface RemoteSinkStats extends RecordSinkStats {
  /** Batches on disk waiting for the management plane. */
  spooledBatches: number;
  sent: number;
}

/** A record entry as one JSON object keyed by column names (bodies embedded as the JSON they are). */
export const recordJson = (e: RecordEntry): string =>
  rowJsonWith(e.row, `"request_body":${e.requestBody ?? 'null'},"response_body":${e.responseBody ?? 'null'},"sanitized":${e.sanitized === null ? 'null' : JSON.stringify(e.sanitized)}`);

export class RemoteRecordSink implements RecordSink {
  #queue: RecordEntry[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #flushing: Promise<void> | undefined;
  #down = false;
  #stopped = false;
  #stats = { sent: 0, dropped: 0 };
  readonly #spool: Spool;

  constructor(
    private readonly send: BatchSender,
    dataDir: string,
    private readonly opts: { flushMs: number; maxBatch?: number } = { flushMs: 250 },
  ) {
    const dir = join(dataDir, 'record-spool');
    mkdirSync(dir, { recursive: true });
    // Batches spooled by versions whose file names did not carry their row count.
    this.#spool = new Spool(dir, (text) => (text.match(/"request_id":/g) ?? []).length);
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

  async #sendCounted(text: string, rows: number): Promise<'ok' | 'retry' | 'refused'> {
    let r: 'ok' | 'retry' | 'refused';
    try {
      r = await this.send(text);
    } catch (e) {
      log.every('records-remote-send', 'warn', 'sending request records to the management plane failed', { error: describeError(e) }, 30_000);
      r = 'retry';
    }
    if (r === 'ok') this.#stats.sent += rows;
    if (r === 'refused') {
      this.#stats.dropped += rows;
      log.every('records-remote-refused', 'error', 'the management plane refused a batch of request records; dropped', { rows });
    }
    if (r === 'retry' && !this.#down) log.warn('the management plane does not take request records now; spooling them to disk', { dir: this.#spool.dir });
    if (r !== 'retry' && this.#down) log.info('the management plane takes request records again', {});
    this.#down = r === 'retry';
    return r;
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
