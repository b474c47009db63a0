import { describeError, log } from '../core/log.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import { buildSnapshot } from './build.ts';
import type { ConfigDocument } from './document.ts';
import type { SnapshotHolder } from './holder.ts';

export interface ControllerSource {
  /** The desired revision (cheap). */
  revision(): Promise<number>;
  /** The whole configuration at (at least) that revision. */
  load(): Promise<ConfigDocument>;
}

export interface ControllerStatus {
  appliedRevision: number;
  lastPollAt: Date | undefined;
  lastDriftSweepAt: Date | undefined;
  lastError: string | undefined;
}

/**
 * Brings the data plane's snapshot to the desired revision: on start (full sync), when woken by a
 * committed change, on every poll tick, and on a drift sweep that rebuilds even when the revision
 * looks current. Rebuilds are coalesced: many wake-ups during one build cause one more build.
 */
export class SnapshotController {
  readonly status: ControllerStatus = { appliedRevision: -1, lastPollAt: undefined, lastDriftSweepAt: undefined, lastError: undefined };
  #running: Promise<void> | undefined;
  #again = false;
  #timers: ReturnType<typeof setInterval>[] = [];

  constructor(
    private readonly source: ControllerSource,
    private readonly holder: SnapshotHolder,
    private readonly getAdapter: (id: string) => ProviderAdapter | undefined,
    private readonly timing: { pollMs: number; driftSweepMs: number },
  ) {}

  async start(): Promise<void> {
    await this.rebuild(true);
    const poll = setInterval(() => void this.sync().catch(() => undefined), this.timing.pollMs);
    const sweep = setInterval(() => {
      this.status.lastDriftSweepAt = new Date();
      void this.rebuild(true).catch(() => undefined);
    }, this.timing.driftSweepMs);
    for (const t of [poll, sweep]) t.unref?.();
    this.#timers = [poll, sweep];
  }

  stop(): void {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
  }

  /** Applies the newest revision if it is newer than what is served; resolves when served. */
  async sync(): Promise<void> {
    this.status.lastPollAt = new Date();
    const desired = await this.source.revision();
    if (desired > this.status.appliedRevision) await this.rebuild(false);
  }

  /** Rebuilds now (coalesced). `force` rebuilds even at the same revision (drift sweep). */
  async rebuild(force: boolean): Promise<void> {
    if (this.#running) {
      // The running build loops once more and so covers this request too.
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          const doc = await this.source.load();
          if (force || doc.revision >= this.status.appliedRevision) {
            this.holder.swap(buildSnapshot(doc, this.getAdapter));
            this.status.appliedRevision = doc.revision;
          }
          this.status.lastError = undefined;
        } catch (e) {
          this.status.lastError = describeError(e);
          log.every('snapshot-build-failed', 'error', 'building the configuration snapshot failed; still serving the previous one', { error: this.status.lastError });
          if (!this.holder.current) throw e;
        }
      } while (this.#again);
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }
}
