/// <reference lib="webworker" />
/**
 * The record writer thread for PostgreSQL: owns one postgres.js connection and inserts the
 * batches the main thread sends. Replies carry the driver's error class, SQLSTATE and first line
 * only (never the statement or its parameters).
 */
import postgres from 'postgres';
import { reconnectBackoff } from '../store/reconnect.ts';
import { INSERT_SQL, type WorkerReply } from './backend.ts';

declare const self: Worker;

let sql: ReturnType<typeof postgres> | undefined;

const firstLine = (m: string): string => (m.split('\n', 1)[0] ?? '').slice(0, 200);

self.onmessage = async (ev: MessageEvent<{ type: 'open'; url: string } | { type: 'insert'; id: number; batch: string } | { type: 'close' }>) => {
  const msg = ev.data;
  if (msg.type === 'open') {
    sql = postgres(msg.url, { max: 1, onnotice: () => undefined, connect_timeout: 5, backoff: reconnectBackoff });
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
    await sql.unsafe(INSERT_SQL, [msg.batch]);
    reply = { id: msg.id, ok: true };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    reply = { id: msg.id, ok: false, code: typeof code === 'string' ? code : undefined, name: e instanceof Error ? e.name : 'Error', message: e instanceof Error ? firstLine(e.message) : 'insert failed' };
  }
  self.postMessage(reply);
};
