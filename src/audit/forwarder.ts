import { and, asc, eq, gt, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { randomToken } from '../core/ids.ts';
import { describeError, log } from '../core/log.ts';
import type { SecretBox } from '../core/secrets.ts';
import { type RecordsForwardOptions, recordsSource } from '../records/forward.ts';
import type { Db } from '../store/db.ts';
import { type AuditLogRow, auditLogs, type TelemetryConfigRow, telemetryConfigs } from '../store/schema/index.ts';
import { auditEntryView } from './entry.ts';
import { inwardSink, otlpLogs } from './otlp.ts';
import { type Cursor, encodedBytes, encodeExport, exportUrl, type ForwardSource, sendExport } from './otlp-export.ts';

/**
 * Forwards to every enabled telemetry config: `audit_logs` sends the audit entries (OTLP logs over
 * HTTP/JSON) every `forwardIntervalSeconds`; `traces`, `metrics` and `logs` send the request
 * records (src/records/forward.ts) as spans, metric points or log records, in the config's
 * protocol, continuously (every tick while records are pending).
 *
 * Exactly once, across restarts and sink failures: each config keeps a durable cursor, the
 * position of the last item its sink accepted (an entry's (timestamp, id), a record's
 * (stored_at, request_id)). A batch is the next items after the cursor, in that order, older than
 * the source's lag (an item whose transaction commits late cannot land behind the cursor). The
 * cursor moves only after the sink accepted (HTTP 2xx, gRPC OK); a failed send moves nothing and
 * is retried with backoff (1 s, 2 s, 4 s … at most 5 min), the config's status turns `error`, and
 * `connected` again on the next accepted batch. A replica forwards for a config only while it
 * holds the config's lease (`leaseOwner`/`leaseUntil`), so two management replicas never send the
 * same batch. The one window for a duplicate: the process dies between the sink's answer and the
 * cursor update (or the sink accepts but answers after the time-out); every log record carries
 * `log.record.uid` (the entry or request id) and a span's ids derive from the request id, for the
 * receiver to de-duplicate.
 */

const BATCH = 500;
const LEASE_MS = 60_000;
const MAX_BACKOFF_S = 300;
/** An export past this is split (4 MB is a common receive limit of collectors, gRPC's default). */
const MAX_EXPORT_BYTES = 3 * 1024 * 1024;
/** At most this lag for records: their batches commit within milliseconds of their stored_at. */
const MAX_RECORDS_LAG_MS = 5_000;

export interface ForwarderOptions {
  /** Entries younger than this are not forwarded yet (see sealLagMs); records: this, at most 5 s. */
  lagMs: number;
  version: string;
  /** GATEWAY_METRICS_TENANT_LABELS: forwarded `metrics` name the project (default true). */
  metricsTenantLabels?: boolean;
  /** How often due configs are looked for (default 1 s). */
  tickMs?: number;
  /** GATEWAY_UPSTREAM_ALLOW_PRIVATE: sinks at inward addresses are used (else refused at every send, see inwardSink). */
  allowInward?: boolean;
  /** Reads bodies kept beside a record (the embedded store in a data directory), as SearchRequestRecords does. */
  recordBodies?: RecordsForwardOptions['recordBodies'];
}

export const backoffSeconds = (failures: number): number => Math.min(MAX_BACKOFF_S, 2 ** Math.max(0, failures - 1));

/** Audit entries (timestamp, id) as OTLP logs over HTTP/JSON (src/audit/otlp.ts). */
const auditSource = (db: Db, lagMs: number, version: string): ForwardSource<AuditLogRow> => {
  const after = (c: Cursor) => or(gt(auditLogs.timestamp, c.ts), and(eq(auditLogs.timestamp, c.ts), gt(auditLogs.id, c.id)));
  const old = () => lt(auditLogs.timestamp, sql`now() - ${lagMs} * interval '1 millisecond'`);
  return {
    pending: async (c) =>
      (
        await db
          .select({ id: auditLogs.id })
          .from(auditLogs)
          .where(and(after(c), old()))
          .limit(1)
      ).length > 0,
    next: (c, limit) =>
      db
        .select()
        .from(auditLogs)
        .where(and(after(c), old()))
        .orderBy(asc(auditLogs.timestamp), asc(auditLogs.id))
        .limit(limit),
    cursorOf: (e) => ({ ts: e.timestamp, id: e.id }),
    export: async (rows) => {
      const json = JSON.stringify(otlpLogs(rows.map(auditEntryView), version));
      return { json: () => json, protobuf: () => undefined };
    },
    signal: 'logs',
    protocols: ['http/json'],
    intervalMs: (cfg) => cfg.forwardIntervalSeconds * 1000,
  };
};

export class TelemetryForwarder {
  readonly #owner = `fw_${randomToken(12)}`;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;
  /** Drains run one at a time in a process (the timer and TriggerAuditForward share the lease owner). */
  #queue: Promise<unknown> = Promise.resolve();
  readonly #audit: ForwardSource<AuditLogRow>;
  readonly #records: RecordsForwardOptions;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly opts: ForwarderOptions,
  ) {
    this.#audit = auditSource(db, opts.lagMs, opts.version);
    this.#records = {
      lagMs: Math.min(MAX_RECORDS_LAG_MS, opts.lagMs),
      version: opts.version,
      metricsTenantLabels: opts.metricsTenantLabels ?? true,
      ...(opts.recordBodies ? { recordBodies: opts.recordBodies } : {}),
    };
  }

  /** Forwards for every due config (its next attempt time has come). */
  drainDue(): Promise<void> {
    return this.#drainWhere(lte(telemetryConfigs.nextAttemptAt, sql`now()`), undefined);
  }

  /** Forwards for every enabled config of the types (default: all) now, whatever its schedule (TriggerAuditForward: audit_logs). */
  drainAll(types?: readonly string[]): Promise<void> {
    return this.#drainWhere(undefined, types);
  }

  #drainWhere(due: ReturnType<typeof lte> | undefined, types: readonly string[] | undefined): Promise<void> {
    const run = this.#queue.then(() => this.#drainSerial(due, types));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #drainSerial(due: ReturnType<typeof lte> | undefined, types: readonly string[] | undefined): Promise<void> {
    const rows = await this.db
      .select({ id: telemetryConfigs.id, type: telemetryConfigs.telemetryType })
      .from(telemetryConfigs)
      .where(and(eq(telemetryConfigs.enabled, true), due));
    for (const { id, type } of rows) if (!types || types.includes(type)) await this.#drainOne(id, type, due !== undefined);
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
          or(
            isNull(telemetryConfigs.leaseUntil),
            lt(telemetryConfigs.leaseUntil, sql`now()`),
            eq(telemetryConfigs.leaseOwner, this.#owner),
          ),
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

  async #cursor(id: string): Promise<Cursor | undefined> {
    const [c] = await this.db
      .select({ ts: telemetryConfigs.cursorTs, id: telemetryConfigs.cursorId })
      .from(telemetryConfigs)
      .where(eq(telemetryConfigs.id, id));
    return c;
  }

  #drainOne(id: string, type: string, dueOnly: boolean): Promise<void> {
    if (type === 'audit_logs') return this.#drainWith(id, this.#audit, dueOnly);
    if (type === 'traces' || type === 'metrics' || type === 'logs')
      return this.#drainWith(id, recordsSource(this.db, type, this.#records), dueOnly);
    return Promise.resolve();
  }

  async #drainWith<T>(id: string, source: ForwardSource<T>, dueOnly: boolean): Promise<void> {
    const start = await this.#cursor(id);
    // A read: nothing is written for a config with nothing to send.
    if (!start || !(await source.pending(start))) return;
    const cfg = await this.#claim(id, dueOnly);
    if (!cfg) return;
    const release = { leaseOwner: null, leaseUntil: null };
    const what = cfg.telemetryType;
    try {
      if (!source.protocols.includes(cfg.protocol)) {
        await this.#update(id, {
          ...release,
          status: 'error',
          lastCheckedAt: new Date(),
          nextAttemptAt: new Date(Date.now() + MAX_BACKOFF_S * 1000),
        });
        log.every(`forward.protocol.${id}`, 'warn', "this telemetry type does not forward in the config's protocol; config skipped", {
          config: id,
          type: what,
          protocol: cfg.protocol,
        });
        return;
      }
      const auth = {
        authType: cfg.authType,
        authValue: cfg.authValueWrapped ? this.secrets.unwrap(cfg.authValueWrapped) : null,
        apiKeyHeader: cfg.apiKeyHeader,
      };
      // Checked at every drain, as the data plane checks its upstreams: a name may resolve inward later.
      const inward = this.opts.allowInward === true ? undefined : await inwardSink(exportUrl(cfg.sinkUrl, cfg.protocol, source.signal));
      if (inward) {
        const failures = cfg.failures + 1;
        await this.#update(id, {
          ...release,
          status: 'error',
          failures,
          lastCheckedAt: new Date(),
          nextAttemptAt: new Date(Date.now() + backoffSeconds(failures) * 1000),
        });
        log.every(
          `forward.inward.${id}`,
          'warn',
          'telemetry sink is at an inward address; not forwarded (GATEWAY_UPSTREAM_ALLOW_PRIVATE=1 allows it)',
          { config: id, type: what, class: inward.class },
        );
        return;
      }
      let cursor: Cursor = { ts: cfg.cursorTs, id: cfg.cursorId };
      for (;;) {
        if (this.#stopped) break;
        const rows = await source.next(cursor, BATCH);
        if (rows.length === 0) break;
        // The batch, halved until its export fits a sink's usual message limit (one item always goes).
        let items = rows;
        let body = encodeExport(await source.export(items, cursor), cfg.protocol);
        while (body !== undefined && items.length > 1 && encodedBytes(body) > MAX_EXPORT_BYTES) {
          items = items.slice(0, Math.ceil(items.length / 2));
          body = encodeExport(await source.export(items, cursor), cfg.protocol);
        }
        const sent =
          body === undefined
            ? { ok: false, message: `protocol ${cfg.protocol} is not supported for ${what}` }
            : await sendExport(cfg.sinkUrl, cfg.protocol, source.signal, auth, body);
        if (!sent.ok) {
          const failures = cfg.failures + 1;
          await this.#update(id, {
            ...release,
            status: 'error',
            failures,
            lastCheckedAt: new Date(),
            nextAttemptAt: new Date(Date.now() + backoffSeconds(failures) * 1000),
          });
          log.every(`forward.${id}`, 'warn', 'forwarding telemetry failed; will retry', {
            config: id,
            type: what,
            reason: sent.message,
            failures,
          });
          return;
        }
        cursor = source.cursorOf(items.at(-1) as T);
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
        if (items.length === rows.length && rows.length < BATCH) break;
      }
      await this.#update(id, { ...release, nextAttemptAt: new Date(Date.now() + source.intervalMs(cfg)) });
    } catch (e) {
      log.every(`forward.${id}`, 'error', 'forwarding telemetry failed; will retry', { config: id, type: what, error: describeError(e) });
      await this.#update(id, { ...release, nextAttemptAt: new Date(Date.now() + backoffSeconds(cfg.failures + 1) * 1000) }).catch(
        () => undefined,
      );
    }
  }

  start(): void {
    const every = this.opts.tickMs ?? 1_000;
    const tick = () => {
      if (this.#stopped) return;
      this.#running = this.drainDue()
        .catch((e: unknown) => log.every('forward', 'error', 'telemetry forwarding failed; retrying', { error: describeError(e) }))
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
