import type { JsonObject } from '../canonical/types.ts';

/**
 * The background responses one process runs now (data-plane/background.ts), by project and id:
 * a cancel through this data plane aborts the upstream call at once, and a stream resumed here
 * is fed from memory instead of polling the store.
 */

/** GATEWAY_BACKGROUND_LEASE's default. */
export const DEFAULT_BACKGROUND_LEASE_MS = 30_000;

/** Why a background run's upstream call was aborted by a cancel. */
export const CANCELLED = 'background response cancelled';
/** Why it was aborted at shutdown (the run then reads failed, saying so). */
export const SHUTDOWN = 'data plane shutting down';

export class BackgroundJob {
  readonly controller = new AbortController();
  /** A streamed run's events so far. */
  readonly events: JsonObject[] = [];
  finished = false;
  #wake: (() => void) | undefined;
  #changed: Promise<void>;
  /** Resolves once the final state is stored. */
  readonly stored: Promise<void>;
  #storedResolve: (() => void) | undefined;

  constructor() {
    this.#changed = this.#next();
    this.stored = new Promise<void>((resolve) => {
      this.#storedResolve = resolve;
    });
  }

  #next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
  }

  /** Resolves at the next event or at the end. */
  changed(): Promise<void> {
    return this.#changed;
  }

  push(event: JsonObject): void {
    this.events.push(event);
    this.#notify();
  }

  end(): void {
    this.finished = true;
    this.#notify();
  }

  settled(): void {
    this.#storedResolve?.();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#changed = this.#next();
    wake?.();
  }
}

export class BackgroundRuns {
  /** This process's identity as a worker (a restart is a new owner). */
  readonly owner = crypto.randomUUID();
  readonly #jobs = new Map<string, BackgroundJob>();

  constructor(readonly leaseMs = DEFAULT_BACKGROUND_LEASE_MS) {}

  open(projectId: string, id: string): BackgroundJob {
    const job = new BackgroundJob();
    this.#jobs.set(`${projectId}\u0000${id}`, job);
    return job;
  }

  get(projectId: string, id: string): BackgroundJob | undefined {
    return this.#jobs.get(`${projectId}\u0000${id}`);
  }

  close(projectId: string, id: string, job: BackgroundJob): void {
    const k = `${projectId}\u0000${id}`;
    if (this.#jobs.get(k) === job) this.#jobs.delete(k);
  }

  /**
   * Shutdown: runs still going after `graceMs` are aborted and stored failed (saying the data plane
   * shut down), so that no reader waits for their lease to end; resolves once that is stored (at
   * most 5 s later).
   */
  async drain(graceMs: number): Promise<void> {
    const all = [...this.#jobs.values()];
    if (all.length === 0) return;
    const settled = Promise.all(all.map((j) => j.stored));
    await Promise.race([settled, Bun.sleep(graceMs)]);
    for (const j of all) if (!j.finished) j.controller.abort(SHUTDOWN);
    await Promise.race([settled, Bun.sleep(5_000)]);
  }
}
