/** The PostgreSQL channel a committed configuration change is announced on (control-plane/mutation.ts). */
export const CONFIG_CHANNEL = 'gateway_config';

/**
 * In-process wake-up: "the configuration revision may have moved" (a NOTIFY was heard, or a poll saw
 * the revision move). Waiters re-read the revision themselves: the signal carries no truth.
 */
export class ChangeSignal {
  readonly #waiters = new Set<() => void>();
  #closed = false;

  /** Wakes every waiter. */
  fire(): void {
    const all = [...this.#waiters];
    this.#waiters.clear();
    for (const w of all) w();
  }

  /** Resolves true when fired, false when `ms` passed or the signal was closed. */
  wait(ms: number): Promise<boolean> {
    if (this.#closed || ms <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (fired: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(fired && !this.#closed);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.#waiters.add(wake);
    });
  }

  /** Releases every waiter and refuses new waits (shutdown: held calls answer at once). */
  close(): void {
    this.#closed = true;
    this.fire();
  }

  get waiting(): number {
    return this.#waiters.size;
  }
}
