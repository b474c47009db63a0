import type { ConfigDocument } from '../api/config-document.ts';

/**
 * Messages between the main thread (controller.ts: owns the snapshot holder and, with PGlite, the
 * database) and the propagation worker (worker.ts: timers, LISTEN on PostgreSQL, decisions).
 */

export interface WorkerTiming {
  pollMs: number;
  driftSweepMs: number;
  /** A full sync every N drift sweeps (and at start). */
  fullSyncEvery: number;
}

/** How the worker reaches the database: its own connection (PostgreSQL) or the main thread (PGlite). */
export type WorkerSource =
  | { kind: 'main' }
  | { kind: 'postgres'; url: string; kek: string; kekPrevious: string[]; upstreamAllowPrivate: boolean };

export type ToWorker =
  | { type: 'start'; timing: WorkerTiming; listen: boolean; source: WorkerSource }
  /** PGlite: the main thread heard a NOTIFY on the configuration channel. */
  | { type: 'notified' }
  | { type: 'reply'; id: number; ok: true; revision: number }
  | { type: 'reply'; id: number; ok: false; error: string }
  | { type: 'stop' };

/**
 * - `revision`: the desired revision (PGlite only; on PostgreSQL the worker reads it itself).
 * - `served`: the revision of the snapshot being served (the drift sweep's check).
 * - `apply`: build and swap a snapshot from `doc` (PostgreSQL: loaded by the worker), or load it
 *   first (PGlite); `force` replaces a snapshot of the same revision (full sync).
 * Each is answered with a `reply` carrying the revision served afterwards.
 */
export type WorkerRequest = { op: 'revision' } | { op: 'served' } | { op: 'apply'; force: boolean; doc?: ConfigDocument };

export interface WorkerStatus {
  lastPollAt: number | undefined;
  lastDriftSweepAt: number | undefined;
  lastFullSyncAt: number | undefined;
  lastError: string | undefined;
}

export type FromWorker =
  | ({ type: 'request'; id: number } & WorkerRequest)
  | { type: 'status'; status: WorkerStatus }
  /** The revision may have moved (a NOTIFY was heard or a poll saw it): wakes held pulls. */
  | { type: 'moved' }
  | { type: 'stopped' };
