import { and, asc, getTableColumns, lt, type SQL, sql } from 'drizzle-orm';
import type { Cursor, ForwardSource } from '../audit/otlp-export.ts';
import type { Db } from '../store/db.ts';
import { type RequestRecordRow, requestRecords } from '../store/schema/index.ts';

/**
 * The request records as the source of telemetry forwarding configs of type `traces`, `metrics`
 * and `logs` (src/audit/forwarder.ts; OTLP mapping in forward-otlp.ts).
 *
 * Every data plane's records land in request_records (the embedded one's writer, separate ones'
 * PushRecords, spooled batches delivered after an outage), so forwarding from the table is durable
 * and survives restarts. A config forwards the records of every project of this management plane
 * (configs are platform-admin resources); each item carries gateway.customer_id and
 * gateway.project_id for a sink to split by. The order is (stored_at, request_id): stored_at is
 * set by the database when the row is stored, so a record that arrives late (an older
 * received_at) still lands after the cursor. Rows are taken once older than the lag: a batch whose
 * transaction commits after its stored_at cannot land behind the cursor.
 */

export interface RecordsForwardOptions {
  lagMs: number;
  version: string;
  /** GATEWAY_METRICS_TENANT_LABELS: forwarded metrics name the project (false: `project` is TENANTS_HIDDEN on every series). */
  metricsTenantLabels: boolean;
  /** Reads bodies kept beside the row (bodies_at), as SearchRequestRecords does. */
  recordBodies?: (at: string) => Promise<{ requestBody: unknown; responseBody: unknown }>;
}

export type RecordsType = 'traces' | 'metrics' | 'logs';

const r = requestRecords;
const after = (c: Cursor): SQL => sql`(${r.storedAt}, ${r.requestId}) > (${c.ts.toISOString()}::timestamptz, ${c.id}::uuid)`;
const old = (lagMs: number): SQL | undefined => lt(r.storedAt, sql`now() - ${lagMs} * interval '1 millisecond'`);

/** Every column but the bodies (spans and metrics do not carry them). */
const { requestBody: _req, responseBody: _res, ...LEAN } = getTableColumns(requestRecords);
const WITHOUT_BODIES = { ...LEAN, requestBody: sql<unknown>`null`, responseBody: sql<unknown>`null` };

export const recordsSource = (db: Db, type: RecordsType, o: RecordsForwardOptions): ForwardSource<RequestRecordRow> => ({
  pending: async (c) =>
    (
      await db
        .select({ id: r.requestId })
        .from(r)
        .where(and(after(c), old(o.lagMs)))
        .limit(1)
    ).length > 0,
  next: async (c, limit) => {
    const where = and(after(c), old(o.lagMs));
    if (type !== 'logs') return db.select(WITHOUT_BODIES).from(r).where(where).orderBy(asc(r.storedAt), asc(r.requestId)).limit(limit);
    const rows = await db.select().from(r).where(where).orderBy(asc(r.storedAt), asc(r.requestId)).limit(limit);
    // Bodies kept beside the row (the embedded store in a data directory) are read from their files.
    const read = o.recordBodies;
    return read ? Promise.all(rows.map(async (row) => (row.bodiesAt ? { ...row, ...(await read(row.bodiesAt)) } : row))) : rows;
  },
  cursorOf: (row) => ({ ts: row.storedAt, id: row.requestId }),
  export: async (rows, from) => {
    const m = await import('./forward-otlp.ts');
    if (type === 'logs') return m.logsExport(rows, o.version);
    if (type === 'traces') return m.tracesExport(rows, o.version);
    return m.metricsExport(rows, from.ts, (rows.at(-1) as RequestRecordRow).storedAt, o.version, o.metricsTenantLabels);
  },
  signal: type,
  protocols: ['http/json', 'http/protobuf', 'grpc'],
  // Continuous: the next tick looks again (a read while nothing is pending).
  intervalMs: () => 0,
});
