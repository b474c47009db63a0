/** Tiny JSON helpers shared by every layer that reads or builds wire bodies. */

export type UnknownRecord = { [key: string]: unknown };

/** A plain JSON object (not null, not an array). */
export const isRecord = (v: unknown): v is UnknownRecord => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of `o` without its `undefined` properties (for building wire bodies). Hot path: no allocation per entry. */
export const compact = <T extends object>(o: T): T => {
  const out: Record<string, unknown> = {};
  const src = o as Record<string, unknown>;
  for (const k in src) {
    const v = src[k];
    if (v !== undefined) out[k] = v;
  }
  return out as T;
};
