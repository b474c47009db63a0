import type { ConfigSnapshot } from './snapshot.ts';

/**
 * Holds the serving snapshot. `current` is read once per request; `swap` replaces it atomically
 * (a request in flight keeps the object it read). Older revisions are never swapped in.
 */
export class SnapshotHolder {
  #current: ConfigSnapshot | undefined;
  readonly #listeners = new Set<(s: ConfigSnapshot) => void>();

  get current(): ConfigSnapshot | undefined {
    return this.#current;
  }

  swap(next: ConfigSnapshot): boolean {
    if (this.#current && next.revision < this.#current.revision) return false;
    this.#current = next;
    for (const l of this.#listeners) l(next);
    return true;
  }

  onSwap(listener: (s: ConfigSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
