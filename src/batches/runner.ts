import { and, asc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { BATCH_ENDPOINTS, type BatchEndpoint, type RunLine } from '../core/batches.ts';
import { describeError, log } from '../core/log.ts';
import type { Db } from '../store/db.ts';
import { type GatewayBatchRow, gatewayBatchLines, gatewayBatches, gatewayFiles } from '../store/schema/index.ts';
import { newId } from './service.ts';
import { type BatchLine, type InputBounds, lineError, outputLine, parseInput } from './lines.ts';

/**
 * Runs batches (contract §11): each line through the project's routes (RunLine: the embedded data
 * plane's pipeline, as the key that created the batch), `concurrency` lines of a batch at a time.
 * A finished line is a `gateway_batch_lines` row, so a batch interrupted by a restart resumes at
 * the lines without one. A process holds a batch by a lease it renews; a lease left by a process
 * that stopped (or died) expires and another run picks the batch up. At the end the lines become
 * the output and error files (OpenAI's line format) and the line rows are removed.
 */

export interface RunnerOptions {
  /** Lines of one batch in flight at once (GATEWAY_BATCH_CONCURRENCY). */
  concurrency: number;
  /** How long a lease holds without renewal (default 30 s). */
  leaseMs?: number;
  /** How often unleased batches are looked for (default 2 s; a new batch wakes the runner at once). */
  pollMs?: number;
  /** Batches run at once by this process (default 4). */
  maxBatches?: number;
  /** Requests per input file and bytes per line (GATEWAY_BATCH_MAX_LINES, GATEWAY_MAX_BODY). */
  input?: InputBounds;
}

const ACTIVE = ['validating', 'in_progress', 'finalizing', 'cancelling'];
const TICK_MS = 500;

export class BatchRunner {
  readonly #owner = newId('runner-');
  readonly #leaseMs: number;
  readonly #pollMs: number;
  readonly #maxBatches: number;
  readonly #running = new Map<string, Promise<void>>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopping = false;
  #claiming: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly run: (batchId: string) => RunLine,
    private readonly opts: RunnerOptions,
  ) {
    this.#leaseMs = opts.leaseMs ?? 30_000;
    this.#pollMs = opts.pollMs ?? 2_000;
    this.#maxBatches = opts.maxBatches ?? 4;
  }

  start(): void {
    this.#timer = setInterval(() => this.wake(), this.#pollMs);
    this.wake();
  }

  /** Looks for batches to run now (a batch was created or cancelled). */
  wake(): void {
    if (this.#stopping || this.#claiming) return;
    this.#claiming = this.#claim()
      .catch((e: unknown) => log.every('batch-claim', 'warn', 'looking for batches to run failed', { error: describeError(e) }))
      .finally(() => {
        this.#claiming = undefined;
      });
  }

  /** Stops taking lines; lines in flight finish; the leases are released so that the next start resumes at once. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#claiming;
    await Promise.all(this.#running.values());
  }

  async #claim(): Promise<void> {
    const room = this.#maxBatches - this.#running.size;
    if (room <= 0) return;
    const free = or(isNull(gatewayBatches.leaseUntil), lt(gatewayBatches.leaseUntil, new Date()));
    const candidates = await this.db
      .select({ id: gatewayBatches.id })
      .from(gatewayBatches)
      .where(and(inArray(gatewayBatches.status, ACTIVE), free))
      .orderBy(asc(gatewayBatches.id))
      .limit(room);
    for (const c of candidates) {
      if (this.#running.has(c.id)) continue;
      const [row] = await this.db
        .update(gatewayBatches)
        .set({ leaseOwner: this.#owner, leaseUntil: new Date(Date.now() + this.#leaseMs) })
        .where(and(eq(gatewayBatches.id, c.id), inArray(gatewayBatches.status, ACTIVE), free))
        .returning();
      if (!row) continue;
      const p = this.#runBatch(row)
        .catch((e: unknown) =>
          log.error('a batch failed to run; it is resumed when its lease expires', { batch: row.id, error: describeError(e) }),
        )
        .finally(() => this.#running.delete(row.id));
      this.#running.set(row.id, p);
    }
  }

  #mine(id: string) {
    return and(eq(gatewayBatches.id, id), eq(gatewayBatches.leaseOwner, this.#owner));
  }

  async #runBatch(row: GatewayBatchRow): Promise<void> {
    const [file] = await this.db.select({ content: gatewayFiles.content }).from(gatewayFiles).where(eq(gatewayFiles.id, row.inputFileId));
    const endpoint = (BATCH_ENDPOINTS as readonly string[]).includes(row.endpoint) ? (row.endpoint as BatchEndpoint) : undefined;
    const parsed =
      file && endpoint
        ? parseInput(file.content, endpoint, this.opts.input)
        : {
            lines: [],
            errors: [
              {
                code: 'invalid_file',
                message: file ? `Unknown endpoint '${row.endpoint}'.` : `The input file '${row.inputFileId}' no longer exists.`,
                line: null,
              },
            ],
          };
    if (row.status === 'validating') {
      if (parsed.errors.length > 0) {
        await this.db
          .update(gatewayBatches)
          .set({ status: 'failed', failedAt: new Date(), errors: parsed.errors, leaseOwner: null, leaseUntil: null })
          .where(this.#mine(row.id));
        return;
      }
      await this.db
        .update(gatewayBatches)
        .set({ status: 'in_progress', inProgressAt: new Date(), total: parsed.lines.length })
        .where(this.#mine(row.id));
    }
    let status = row.status === 'validating' ? 'in_progress' : row.status;
    const done = new Set(
      (await this.db.select({ line: gatewayBatchLines.line }).from(gatewayBatchLines).where(eq(gatewayBatchLines.batchId, row.id))).map(
        (r) => r.line,
      ),
    );
    const expiresAt = row.expiresAt.getTime();
    const run = this.run(row.id);
    let next = 0;
    const halted = (): boolean => this.#stopping || status === 'cancelling' || Date.now() >= expiresAt;
    const worker = async (): Promise<void> => {
      for (;;) {
        if (halted()) return;
        while (next < parsed.lines.length && done.has(next)) next++;
        if (next >= parsed.lines.length) return;
        const i = next++;
        await this.#runLine(row, run, endpoint, parsed.lines[i] as BatchLine, i);
        done.add(i);
      }
    };
    const tick = setInterval(() => {
      void this.#renew(row.id).then(
        (s) => {
          if (s !== undefined) status = s;
        },
        (e: unknown) => log.every('batch-renew', 'warn', 'renewing a batch lease failed', { batch: row.id, error: describeError(e) }),
      );
    }, TICK_MS);
    try {
      if (status === 'in_progress')
        await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, Math.max(1, parsed.lines.length)) }, worker));
    } finally {
      clearInterval(tick);
    }
    if (this.#stopping) {
      // Resumed by the next start (or another process) from the lines written so far.
      await this.#counts(row.id, { leaseOwner: null, leaseUntil: null });
      return;
    }
    const [now] = await this.db.select({ status: gatewayBatches.status }).from(gatewayBatches).where(eq(gatewayBatches.id, row.id));
    const final =
      now?.status === 'cancelling' ? 'cancelled' : Date.now() >= expiresAt && done.size < parsed.lines.length ? 'expired' : 'completed';
    await this.#finalize(row, final);
  }

  async #runLine(row: GatewayBatchRow, run: RunLine, endpoint: BatchEndpoint | undefined, line: BatchLine, i: number): Promise<void> {
    let ok: boolean;
    let text: string;
    if (line.refusal || !endpoint) {
      ok = false;
      text = lineError(line.customId, 'invalid_request', line.refusal ?? 'unknown endpoint');
    } else {
      try {
        const r = await run(row.apiKeyId, endpoint, line.body, line.customId);
        ok = r.status >= 200 && r.status < 300;
        text = outputLine(line.customId, r.status, r.requestId, r.body);
      } catch (e) {
        ok = false;
        text = lineError(line.customId, 'internal_error', describeError(e));
      }
    }
    await this.db.insert(gatewayBatchLines).values({ batchId: row.id, line: i, ok, text }).onConflictDoNothing();
  }

  /** Renews the lease and refreshes the counts; gives the batch's status (to see a cancellation). */
  async #renew(id: string): Promise<string | undefined> {
    const [r] = await this.#counts(id, { leaseUntil: new Date(Date.now() + this.#leaseMs) });
    return r?.status;
  }

  #counts(id: string, more: Partial<Pick<GatewayBatchRow, 'leaseOwner' | 'leaseUntil'>>) {
    return this.db
      .update(gatewayBatches)
      .set({
        ...more,
        completed: sql`(select count(*) from gateway_batch_lines where batch_id = ${id} and ok)::int`,
        failed: sql`(select count(*) from gateway_batch_lines where batch_id = ${id} and not ok)::int`,
      })
      .where(this.#mine(id))
      .returning({ status: gatewayBatches.status });
  }

  /** The output and error files from the finished lines, the batch's end state, and the line rows removed; one transaction. */
  async #finalize(row: GatewayBatchRow, status: 'completed' | 'cancelled' | 'expired'): Promise<void> {
    await this.db
      .update(gatewayBatches)
      .set({ status: status === 'completed' ? 'finalizing' : 'cancelling', finalizingAt: new Date() })
      .where(this.#mine(row.id));
    await this.db.transaction(async (tx) => {
      const lines = await tx
        .select({ ok: gatewayBatchLines.ok, text: gatewayBatchLines.text })
        .from(gatewayBatchLines)
        .where(eq(gatewayBatchLines.batchId, row.id))
        .orderBy(asc(gatewayBatchLines.line));
      const fileOf = async (ok: boolean, name: string): Promise<string | null> => {
        const picked = lines.filter((l) => l.ok === ok);
        if (picked.length === 0) return null;
        const content = `${picked.map((l) => l.text).join('\n')}\n`;
        const id = newId('file-');
        await tx.insert(gatewayFiles).values({
          id,
          projectUuid: row.projectUuid,
          purpose: 'batch_output',
          filename: `${row.id}_${name}.jsonl`,
          bytes: Buffer.byteLength(content),
          content,
        });
        return id;
      };
      const outputFileId = await fileOf(true, 'output');
      const errorFileId = await fileOf(false, 'error');
      const now = new Date();
      await tx
        .update(gatewayBatches)
        .set({
          status,
          outputFileId,
          errorFileId,
          completed: lines.filter((l) => l.ok).length,
          failed: lines.filter((l) => !l.ok).length,
          ...(status === 'cancelled' ? { cancelledAt: now } : { completedAt: now }),
          leaseOwner: null,
          leaseUntil: null,
        })
        .where(this.#mine(row.id));
      await tx.delete(gatewayBatchLines).where(eq(gatewayBatchLines.batchId, row.id));
    });
  }
}
