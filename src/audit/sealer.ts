import { desc, lt, min, sql } from 'drizzle-orm';
import { describeError, log } from '../core/log.ts';
import type { SecretBox } from '../core/secrets.ts';
import type { Db } from '../store/db.ts';
import { type AuditCheckpointRow, auditCheckpoints, auditLogs } from '../store/schema/index.ts';
import { CHECKPOINT_ALGO, checkpointView, windowLeaves } from './checkpoint.ts';
import { checkpointMessage } from './verifier.ts';
import { activeAuditSigner, KEK_VERSION } from './keys.ts';
import { merkleRoot } from './merkle.ts';

/**
 * Seals audit checkpoints (contract §3.3) over closed windows.
 *
 * Windows are contiguous and half-open, `rangeStartTs ≤ timestamp < rangeEndTs`: each starts where
 * the previous one ended (the first at the earliest entry) and ends on a multiple of the interval
 * (GATEWAY_AUDIT_CHECKPOINT_INTERVAL, counted from the Unix epoch) at least `lag` in the past of
 * the database clock. The lag (see `sealLagMs`) covers entries whose transaction commits after
 * the time they carry: a window is sealed only once no entry can still arrive in it. A window
 * with no entries is not sealed; the next checkpoint's window then spans it.
 *
 * Replicas: sealing runs in one transaction under a transaction-level advisory lock, reads the
 * last checkpoint after taking it and inserts `seq + 1` (the primary key): two management
 * replicas on one database never seal a window twice nor leave a gap.
 */

const SEAL_LOCK = 0x61736c31; // 'asl1'
const MAX_LAG_MS = 30_000;

/** How far behind the clock windows close: the interval, at most 30 s. */
export const sealLagMs = (intervalMs: number): number => Math.min(MAX_LAG_MS, intervalMs);

export interface SealerOptions {
  intervalMs: number;
  /** Defaults to `sealLagMs(intervalMs)`. */
  lagMs?: number;
}

export class AuditSealer {
  readonly #db: Db;
  readonly #secrets: SecretBox;
  readonly #intervalMs: number;
  readonly #lagMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(db: Db, secrets: SecretBox, opts: SealerOptions) {
    this.#db = db;
    this.#secrets = secrets;
    this.#intervalMs = opts.intervalMs;
    this.#lagMs = opts.lagMs ?? sealLagMs(opts.intervalMs);
  }

  /**
   * Seals the next closed window, if it has entries. `now` replaces the database clock (tests).
   * Returns the new checkpoint, or undefined when there was nothing to seal.
   */
  async sealOnce(now?: Date): Promise<AuditCheckpointRow | undefined> {
    return this.#db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${SEAL_LOCK})`);
      const clock = now ?? (await this.#dbNow(tx));
      const end = new Date(Math.floor((clock.getTime() - this.#lagMs) / this.#intervalMs) * this.#intervalMs);
      const [last] = await tx.select().from(auditCheckpoints).orderBy(desc(auditCheckpoints.seq)).limit(1);
      const start = last
        ? last.rangeEndTs
        : (
            await tx
              .select({ t: min(auditLogs.timestamp) })
              .from(auditLogs)
              .where(lt(auditLogs.timestamp, end))
          )[0]?.t;
      if (!start || start.getTime() >= end.getTime()) return undefined;
      const leaves = await windowLeaves(tx, start, end);
      if (leaves.ids.length === 0) return undefined;
      // The key is created on first need, inside the lock (nothing is written while there is nothing to seal).
      const signer = await activeAuditSigner(tx, this.#secrets);
      const seq = (last?.seq ?? 0) + 1;
      const signed = {
        seq,
        rangeStartId: leaves.ids[0] as string,
        rangeEndId: leaves.ids.at(-1) as string,
        rangeStartTs: start,
        rangeEndTs: end,
        leafCount: leaves.ids.length,
        rootHash: merkleRoot(leaves.hashes),
        prevRootHash: last ? last.rootHash : new Uint8Array(0),
        algo: CHECKPOINT_ALGO,
      };
      const signedAt = new Date();
      const draft: AuditCheckpointRow = {
        ...signed,
        signature: new Uint8Array(0),
        signingKid: signer.kid,
        kekVersion: KEK_VERSION,
        signedAt,
        createdAt: signedAt,
      };
      const signature = signer.sign(checkpointMessage(checkpointView(draft)));
      const [row] = await tx
        .insert(auditCheckpoints)
        .values({ ...signed, signature, signingKid: signer.kid, kekVersion: KEK_VERSION, signedAt })
        .onConflictDoNothing()
        .returning();
      return row;
    });
  }

  /** Seals every closed window there is (a window per call until none is left). */
  async sealAll(now?: Date): Promise<number> {
    let n = 0;
    while (await this.sealOnce(now)) n++;
    return n;
  }

  async #dbNow(tx: Pick<Db, 'execute'>): Promise<Date> {
    const res = await tx.execute<{ now: string | Date }>(sql`select now() as now`);
    const rows = (Array.isArray(res) ? res : (res as { rows: unknown[] }).rows) as { now: string | Date }[];
    const v = rows[0]?.now;
    return v instanceof Date ? v : new Date(String(v));
  }

  /** Seals on a timer (a few times per interval, so a window is sealed soon after it closes). */
  start(): void {
    const every = Math.max(1_000, Math.min(60_000, Math.floor(this.#intervalMs / 4)));
    const tick = () => {
      if (this.#stopped) return;
      this.#running = this.sealAll()
        .catch((e: unknown) =>
          log.every('audit.seal', 'error', 'sealing an audit checkpoint failed; retrying', { error: describeError(e) }),
        )
        .finally(() => {
          this.#running = undefined;
          if (!this.#stopped) this.#timer = setTimeout(tick, every);
        });
    };
    this.#timer = setTimeout(tick, Math.min(every, 1_000));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
