/**
 * One interval timer for many deadlines (a timer per request or stream costs more than the
 * checks): `visit(item, now)` runs for every item each period and returns true to let the item go.
 * The timer runs only while there are items (unref'd: it never keeps the process alive); `now` is
 * `performance.now()` or `Date.now()`, as the items' deadlines are kept.
 */
export class Sweep<T> {
  readonly #items = new Set<T>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly periodMs: number,
    private readonly visit: (item: T, now: number) => boolean,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  add(item: T): void {
    this.#items.add(item);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#run(), this.periodMs);
      this.#timer.unref?.();
    }
  }

  delete(item: T): void {
    this.#items.delete(item);
  }

  get size(): number {
    return this.#items.size;
  }

  /** The items now (a copy: visiting them may remove them). */
  items(): T[] {
    return [...this.#items];
  }

  #run(): void {
    if (this.#items.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = this.clock();
    for (const item of this.#items) if (this.visit(item, now)) this.#items.delete(item);
  }
}
