import type { SnapshotController } from './controller.ts';
import type { SnapshotHolder } from './holder.ts';

/**
 * Read-your-writes for the data plane that runs in the management process. A management write
 * returns at commit and the embedded plane serves the change tens of milliseconds later; a client
 * that creates a key (or a route) and uses it at once would see a 401 (or 404) in between. So a
 * request refused for an unknown caller or model, within `windowMs` of a write that recorded a
 * configuration change, waits (at most `waitMs`) for the plane to serve the newest committed
 * revision and is looked up once more (pipeline/index.ts). Concurrent refusals share one wait;
 * outside the window a refusal costs nothing extra. Separate data planes do not have this: there,
 * propagation time is the contract's "seconds".
 */
export const readYourWrites = (controller: SnapshotController, holder: SnapshotHolder, windowMs = 10_000, waitMs = 3_000) => {
  let recordedAt = Number.NEGATIVE_INFINITY;
  let waiting: Promise<void> | undefined;
  return {
    /** ControlDeps.changeRecorded. */
    changeRecorded: (): void => {
      recordedAt = Date.now();
    },
    /** PipelineDeps.catchUp: true when the served snapshot moved while waiting. */
    catchUp: async (): Promise<boolean> => {
      if (Date.now() - recordedAt > windowMs) return false;
      const before = holder.current?.revision;
      waiting ??= controller
        .settled(waitMs)
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          waiting = undefined;
        });
      await waiting;
      return holder.current?.revision !== before;
    },
  };
};
