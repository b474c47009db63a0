import type { OpOutput } from '../../api/index.ts';

/**
 * The changes saved from this console, and where each one is on its way to every data plane
 * (the seed's stages: saved → recorded → pending → serving). GetConfigStatus reports, per data
 * plane, the newest change addressed to it (desiredRevision) and what it applied (appliedRevision).
 * A change saved here is written in one transaction with its change records, so the first status
 * read after the save names its revision: the plane's desiredRevision then, when it moved past the
 * one read just before the save. It serves once the plane applied that revision, whatever newer
 * changes came after.
 */

export type Plane = OpOutput<'GetConfigStatus'>['dataplanes'][number];
export type Stage = 'saved' | 'recorded' | 'pending' | 'serving' | 'not affected';

export interface Change {
  id: number;
  /** What was done, in words ("UpdateRoute gpt-mini"). */
  what: string;
  at: number;
  /** Each plane's desiredRevision read just before the save (undefined: it could not be read). */
  before: Record<string, string> | undefined;
  /** Each affected plane's revision of this change, from the first status read after the save (`observed`). */
  revision: Record<string, string>;
  observed: boolean;
}

const big = (s: string): bigint => (/^\d+$/.test(s) ? BigInt(s) : 0n);

export const revisionsOf = (planes: readonly Plane[]): Record<string, string> =>
  Object.fromEntries(planes.map((p) => [p.dataplaneId, p.desiredRevision]));

/**
 * From the first status read after the save: this change's revision on every plane whose
 * desiredRevision moved past the one read before the save (a plane new since then counts as moved).
 */
export const noteRevisions = (change: Change, planes: readonly Plane[]): Change => {
  if (change.observed) return change;
  const revision: Record<string, string> = {};
  for (const p of planes) {
    const before = change.before?.[p.dataplaneId];
    if (change.before === undefined || before === undefined || big(p.desiredRevision) > big(before))
      revision[p.dataplaneId] = p.desiredRevision;
  }
  return { ...change, revision, observed: true };
};

/** This change's stage on one plane, from the plane's status now. */
export const stageOn = (change: Change, plane: Plane | undefined): Stage => {
  if (!plane || !change.observed) return 'saved';
  const rev = change.revision[plane.dataplaneId];
  if (rev === undefined) return 'not affected';
  if (big(plane.appliedRevision) >= big(rev)) return 'serving';
  return plane.stage === 'recorded' ? 'recorded' : 'pending';
};

/** True when no plane has this change still on its way. */
export const settled = (change: Change, planes: readonly Plane[] | undefined): boolean =>
  planes?.every((p) => {
    const s = stageOn(change, p);
    return s === 'serving' || s === 'not affected';
  }) === true;

type Listener = (changes: readonly Change[]) => void;

/** The changes saved in this tab, newest first (at most 20), with subscribers (the pages that show them). */
export class ChangeLog {
  private changes: Change[] = [];
  private listeners = new Set<Listener>();
  private next = 1;

  /** A change just saved: its stage is `saved` until `observe` reads where it went. */
  add(what: string, before: Record<string, string> | undefined): Change {
    const change: Change = { id: this.next++, what, at: Date.now(), before, revision: {}, observed: false };
    this.changes = [change, ...this.changes].slice(0, 20);
    this.emit();
    return change;
  }

  /** The first status read after the save of change `id` (read after it returned, never before). */
  observe(id: number, planes: readonly Plane[]): void {
    this.changes = this.changes.map((c) => (c.id === id ? noteRevisions(c, planes) : c));
    this.emit();
  }

  get(id: number): Change | undefined {
    return this.changes.find((c) => c.id === id);
  }

  all(): readonly Change[] {
    return this.changes;
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit(): void {
    for (const l of this.listeners) l(this.changes);
  }
}
