import type { EmbeddedFiles } from './embedded.ts';

/**
 * The messages between the embedded store's owner thread (pglite-worker.ts, the only code that
 * runs PGlite) and its client on the main thread (pglite-remote.ts). Every request carries an id
 * and is answered once, with the same id; notifications of LISTEN carry none.
 */

export interface OpenPglite {
  /** A directory, or 'memory' (tests). */
  dataDir: string;
  sharedBuffersKb?: number;
  /** false (GATEWAY_MIGRATE=0): apply nothing, refuse to open while a migration is pending. */
  migrate: boolean;
  /** The compiled binary's embedded files (store/embedded.ts), when it runs from one. */
  embedded?: EmbeddedFiles;
}

export type PgliteRequest =
  | { id: number; op: 'open'; open: OpenPglite }
  | { id: number; op: 'query'; text: string; params: unknown[]; rowMode: 'array' | 'object'; tx?: number }
  | { id: number; op: 'exec'; text: string; blob?: Blob; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'listen'; channel: string }
  | { id: number; op: 'unlisten'; listener: number }
  | { id: number; op: 'close' };

/** A PostgreSQL error as it crosses threads: its message and the fields callers read. */
export interface WireError {
  name: string;
  message: string;
  fields: Record<string, string | number>;
}

export type PgliteReply =
  | { id: number; ok: true; value?: unknown }
  | { id: number; ok: false; error: WireError }
  | { notify: number; payload: string };

/** The fields of a PostgreSQL error callers read (PGlite's DatabaseError, as postgres.js names them). */
export const ERROR_FIELDS = [
  'code',
  'detail',
  'hint',
  'constraint',
  'table',
  'column',
  'schema',
  'severity',
  'position',
  'where',
  'routine',
] as const;

export const toWireError = (e: unknown): WireError => {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e), fields: {} };
  const fields: Record<string, string | number> = {};
  for (const f of ERROR_FIELDS) {
    const v: unknown = Reflect.get(e, f);
    if (typeof v === 'string' || typeof v === 'number') fields[f] = v;
  }
  return { name: e.name, message: e.message, fields };
};

/** The error again on this side, with the same name, message and fields. */
export const fromWireError = (w: WireError): Error => {
  const e = new Error(w.message);
  e.name = w.name;
  return Object.assign(e, w.fields);
};
