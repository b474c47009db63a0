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

  /**
   * Registers a waiter at once (so a fire between this call and reading the revision is not
   * missed): `fired` resolves true when fired, false when `ms` passed, the signal was closed or
   * `cancel` was called.
   */
  waiter(ms: number): { fired: Promise<boolean>; cancel: () => void } {
    if (this.#closed || ms <= 0) return { fired: Promise.resolve(false), cancel: () => undefined };
    let done: (fired: boolean) => void = () => undefined;
    const fired = new Promise<boolean>((resolve) => {
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      done = (f: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(f && !this.#closed);
      };
      this.#waiters.add(wake);
    });
    return { fired, cancel: () => done(false) };
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
