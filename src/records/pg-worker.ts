/// <reference lib="webworker" />
/**
 * The record writer thread for PostgreSQL: owns its postgres.js connections (one per batch in
 * flight, GATEWAY_RECORD_WRITERS) and inserts the
 * batches the main thread sends — CSV lines through `COPY … FROM STDIN` (about a third cheaper
 * per row than the JSON insert, bench/records-scale.ts), or a JSON batch (a spooled one, or one
 * COPY refused for a duplicate request id) through the insert that skips duplicates. Replies carry the driver's error class, SQLSTATE and first line
 * only (never the statement or its parameters).
 */
import postgres from 'postgres';
import { reconnectBackoff } from '../store/reconnect.ts';
import { COPY_REFUSED, INSERT_SQL, type WorkerReply } from './backend.ts';
import { COPY_STDIN_SQL } from './entry.ts';

declare const self: Worker;

/** Below the records forwarder's lag (src/audit/forwarder.ts, at most 5 s). */
const WRITE_TIMEOUT_MS = 4_000;

let sql: ReturnType<typeof postgres> | undefined;

const firstLine = (m: string): string => (m.split('\n', 1)[0] ?? '').slice(0, 200);

/** The server's answer to a query after a COPY that failed in the same transaction. */
const IN_FAILED_TRANSACTION = '25P02';

/**
 * One COPY of the CSV lines, in a transaction: whether the server took them. postgres.js 3.4 drops
 * the server's error for a COPY refused after the stream ended (a duplicate request id is found
 * then) — and still ends the stream at the next query — so a query after the COPY in the same
 * transaction tells: refused, it is answered 25P02 and the transaction rolls back. The query is
 * sent once the stream has handed its end to the connection (before that postgres.js refuses any
 * query). A connection lost throws.
 */
const copy = async (db: ReturnType<typeof postgres>, csv: string): Promise<boolean> => {
  try {
    await db.begin(async (tx) => {
      const stream = await tx.unsafe(COPY_STDIN_SQL).writable();
      let failed: unknown;
      stream.on('error', (e: unknown) => {
        failed = e;
      });
      await new Promise<void>((resolve) => stream.write(csv, () => resolve()));
      if (failed === undefined) {
        stream.end();
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await tx`select 1`;
      if (failed !== undefined) throw failed;
    });
    return true;
  } catch (e) {
    if ((e as { code?: unknown }).code === IN_FAILED_TRANSACTION) return false;
    throw e;
  }
};

self.onmessage = async (
  ev: MessageEvent<
    { type: 'open'; url: string; connections: number } | { type: 'insert' | 'copy'; id: number; batch: string } | { type: 'close' }
  >,
) => {
  const msg = ev.data;
  if (msg.type === 'open') {
    // A batch's statement is cut at WRITE_TIMEOUT_MS (57014, not a data error: the batch stays
    // queued and is written again): no batch commits later than that after its stored_at (the
    // transaction's start), which keeps the forwarding cursor's order (forward.ts, a lag of 5 s)
    // whatever the number of writers and whatever they wait for (a rollup row another writer
    // holds, a partition being detached). Each batch in flight has a connection of its own (the
    // RecordWriter's `writers`, concurrent here: this handler awaits, the next message is taken).
    sql = postgres(msg.url, {
      max: Math.max(1, msg.connections),
      onnotice: () => undefined,
      connect_timeout: 5,
      backoff: reconnectBackoff,
      connection: { statement_timeout: WRITE_TIMEOUT_MS },
    });
    return;
  }
  if (msg.type === 'close') {
    await sql?.end({ timeout: 1 }).catch(() => undefined);
    self.postMessage({ type: 'closed' });
    return;
  }
  let reply: WorkerReply;
  try {
    if (!sql) throw new Error('record writer not open');
    if (msg.type === 'insert') await sql.unsafe(INSERT_SQL, [msg.batch]);
    reply =
      msg.type === 'copy' && !(await copy(sql, msg.batch))
        ? { id: msg.id, ok: false, code: undefined, name: COPY_REFUSED, message: 'COPY refused' }
        : { id: msg.id, ok: true };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    reply = {
      id: msg.id,
      ok: false,
      code: typeof code === 'string' ? code : undefined,
      name: e instanceof Error ? e.name : 'Error',
      message: e instanceof Error ? firstLine(e.message) : 'insert failed',
    };
  }
  self.postMessage(reply);
};
