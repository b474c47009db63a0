import { and, asc, eq, gt, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { randomToken } from '../core/ids.ts';
import { describeError, log } from '../core/log.ts';
import type { SecretBox } from '../core/secrets.ts';
import type { Db } from '../store/db.ts';
import { auditLogs, type TelemetryConfigRow, telemetryConfigs } from '../store/schema/index.ts';
import { auditEntryView } from './entry.ts';
import { inwardSink, logsUrl, otlpLogs, sendOtlp } from './otlp.ts';

/**
 * Forwards audit entries to every enabled telemetry config of type `audit_logs` (protocol
 * http/json), as OTLP logs, every `forwardIntervalSeconds`.
 *
 * Exactly once, across restarts and sink failures: each config keeps a durable cursor, the
 * (timestamp, id) of the last entry its sink accepted. A batch is the next entries after the
 * cursor, in (timestamp, id) order, whose timestamp is older than the audit lag (the same lag
 * that closes checkpoint windows: an entry committed late cannot land behind the cursor). The
 * cursor moves only after a 2xx answer; a failed send moves nothing and is retried with backoff
 * (1 s, 2 s, 4 s … at most 5 min), the config's status turns `error`, and `connected` again on the
 * next accepted batch. A replica forwards for a config only while it holds the config's lease
 * (`leaseOwner`/`leaseUntil`), so two management replicas never send the same batch.
 * The one window for a duplicate: the process dies between the sink's 2xx and the cursor update
 * (or the sink accepts but answers after the time-out); every record carries `log.record.uid`
 * (the entry id) for the receiver to de-duplicate.
 */

const BATCH = 500;
const LEASE_MS = 60_000;
const MAX_BACKOFF_S = 300;

export interface ForwarderOptions {
  /** Entries younger than this are not forwarded yet (see sealLagMs). */
  lagMs: number;
  version: string;
  /** How often due configs are looked for (default 1 s). */
  tickMs?: number;
  /** GATEWAY_UPSTREAM_ALLOW_PRIVATE: sinks at inward addresses are used (else refused at every send, see inwardSink). */
  allowInward?: boolean;
}

export const backoffSeconds = (failures: number): number => Math.min(MAX_BACKOFF_S, 2 ** Math.max(0, failures - 1));

export class AuditForwarder {
  readonly #owner = `fw_${randomToken(12)}`;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;
  /** Drains run one at a time in a process (the timer and TriggerAuditForward share the lease owner). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly opts: ForwarderOptions,
  ) {}

  /** Forwards for every due config (its next attempt time has come). */
  drainDue(): Promise<void> {
    return this.#drainWhere(lte(telemetryConfigs.nextAttemptAt, sql`now()`));
  }

  /** Forwards for every enabled audit_logs config now, whatever its schedule (TriggerAuditForward). */
  drainAll(): Promise<void> {
    return this.#drainWhere(undefined);
  }

  #drainWhere(due: ReturnType<typeof lte> | undefined): Promise<void> {
    const run = this.#queue.then(() => this.#drainSerial(due));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #drainSerial(due: ReturnType<typeof lte> | undefined): Promise<void> {
    const ids = await this.db
      .select({ id: telemetryConfigs.id })
      .from(telemetryConfigs)
      .where(and(eq(telemetryConfigs.telemetryType, 'audit_logs'), eq(telemetryConfigs.enabled, true), due));
    for (const { id } of ids) await this.#drainOne(id, due !== undefined);
  }

  /** Claims the config's lease (free, expired or already ours); undefined when another replica holds it. */
  async #claim(id: string, dueOnly: boolean): Promise<TelemetryConfigRow | undefined> {
    const [row] = await this.db
      .update(telemetryConfigs)
      .set({ leaseOwner: this.#owner, leaseUntil: sql`now() + ${LEASE_MS} * interval '1 millisecond'` })
      .where(
        and(
          eq(telemetryConfigs.id, id),
          eq(telemetryConfigs.enabled, true),
          eq(telemetryConfigs.telemetryType, 'audit_logs'),
          or(isNull(telemetryConfigs.leaseUntil), lt(telemetryConfigs.leaseUntil, sql`now()`), eq(telemetryConfigs.leaseOwner, this.#owner)),
          dueOnly ? lte(telemetryConfigs.nextAttemptAt, sql`now()`) : undefined,
        ),
      )
      .returning();
    return row;
  }

  /** Updates the config while we hold its lease; false when the lease (or the config) is gone. */
  async #update(id: string, patch: PgUpdateSetSource<typeof telemetryConfigs>): Promise<boolean> {
    const rows = await this.db
      .update(telemetryConfigs)
      .set(patch)
      .where(and(eq(telemetryConfigs.id, id), eq(telemetryConfigs.leaseOwner, this.#owner)))
      .returning({ id: telemetryConfigs.id });
    return rows.length > 0;
  }

  /** Whether an entry after the config's cursor is old enough to forward (a read; nothing is written otherwise). */
  async #pending(id: string): Promise<boolean> {
    const [c] = await this.db.select({ ts: telemetryConfigs.cursorTs, id: telemetryConfigs.cursorId }).from(telemetryConfigs).where(eq(telemetryConfigs.id, id));
    if (!c) return false;
    const rows = await this.db
      .select({ id: auditLogs.id })
      .from(auditLogs)
      .where(and(this.#after(c), lt(auditLogs.timestamp, sql`now() - ${this.opts.lagMs} * interval '1 millisecond'`)))
      .limit(1);
    return rows.length > 0;
  }

  #after(c: { ts: Date; id: string }) {
    return or(gt(auditLogs.timestamp, c.ts), and(eq(auditLogs.timestamp, c.ts), gt(auditLogs.id, c.id)));
  }

  async #drainOne(id: string, dueOnly: boolean): Promise<void> {
    if (!(await this.#pending(id))) return;
    const cfg = await this.#claim(id, dueOnly);
    if (!cfg) return;
    const release = { leaseOwner: null, leaseUntil: null };
    try {
      if (cfg.protocol !== 'http/json') {
        await this.#update(id, { ...release, status: 'error', lastCheckedAt: new Date(), nextAttemptAt: new Date(Date.now() + MAX_BACKOFF_S * 1000) });
        log.every(`audit.forward.protocol.${id}`, 'warn', 'audit forwarding supports only protocol http/json; config skipped', { config: id });
        return;
      }
      const auth = { authType: cfg.authType, authValue: cfg.authValueWrapped ? this.secrets.unwrap(cfg.authValueWrapped) : null, apiKeyHeader: cfg.apiKeyHeader };
      const url = logsUrl(cfg.sinkUrl);
      // Checked at every drain, as the data plane checks its upstreams: a name may resolve inward later.
      const inward = this.opts.allowInward === true ? undefined : await inwardSink(url);
      if (inward) {
        const failures = cfg.failures + 1;
        await this.#update(id, { ...release, status: 'error', failures, lastCheckedAt: new Date(), nextAttemptAt: new Date(Date.now() + backoffSeconds(failures) * 1000) });
        log.every(`audit.forward.inward.${id}`, 'warn', 'audit sink is at an inward address; not forwarded (GATEWAY_UPSTREAM_ALLOW_PRIVATE=1 allows it)', { config: id, class: inward.class });
        return;
      }
      let cursor = { ts: cfg.cursorTs, id: cfg.cursorId };
      for (;;) {
        if (this.#stopped) break;
        const rows = await this.db
          .select()
          .from(auditLogs)
          .where(
            and(
              this.#after(cursor),
              lt(auditLogs.timestamp, sql`now() - ${this.opts.lagMs} * interval '1 millisecond'`),
            ),
          )
          .orderBy(asc(auditLogs.timestamp), asc(auditLogs.id))
          .limit(BATCH);
        if (rows.length === 0) break;
        const sent = await sendOtlp(url, auth, otlpLogs(rows.map(auditEntryView), this.opts.version));
        if (!sent.ok) {
          const failures = cfg.failures + 1;
          await this.#update(id, { ...release, status: 'error', failures, lastCheckedAt: new Date(), nextAttemptAt: new Date(Date.now() + backoffSeconds(failures) * 1000) });
          log.every(`audit.forward.${id}`, 'warn', 'forwarding audit entries failed; will retry', { config: id, reason: sent.message, failures });
          return;
        }
        const last = rows.at(-1) as (typeof rows)[number];
        cursor = { ts: last.timestamp, id: last.id };
        cfg.failures = 0;
        const kept = await this.#update(id, {
          cursorTs: cursor.ts,
          cursorId: cursor.id,
          status: 'connected',
          failures: 0,
          lastCheckedAt: new Date(),
          leaseUntil: sql`now() + ${LEASE_MS} * interval '1 millisecond'`,
        });
        if (!kept) return;
        if (rows.length < BATCH) break;
      }
      await this.#update(id, { ...release, nextAttemptAt: new Date(Date.now() + cfg.forwardIntervalSeconds * 1000) });
    } catch (e) {
      log.every(`audit.forward.${id}`, 'error', 'forwarding audit entries failed; will retry', { config: id, error: describeError(e) });
      await this.#update(id, { ...release, nextAttemptAt: new Date(Date.now() + backoffSeconds(cfg.failures + 1) * 1000) }).catch(() => undefined);
    }
  }

  start(): void {
    const every = this.opts.tickMs ?? 1_000;
    const tick = () => {
      if (this.#stopped) return;
      this.#running = this.drainDue()
        .catch((e: unknown) => log.every('audit.forward', 'error', 'audit forwarding failed; retrying', { error: describeError(e) }))
        .finally(() => {
          this.#running = undefined;
          if (!this.#stopped) this.#timer = setTimeout(tick, every);
        });
    };
    this.#timer = setTimeout(tick, every);
  }

  /** Stops the timer and waits for a send in flight (its cursor update included). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
