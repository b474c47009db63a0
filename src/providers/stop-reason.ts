/** Upstream stop (finish) reasons → the canonical finish reason, for every provider family. */
import type { FinishReason } from '../canonical/types.ts';

/** A family's stop reasons that do not mean `stop`, listed under the canonical reason they mean. */
export type StopReasonTable = Partial<Record<Exclude<FinishReason, 'stop'>, readonly string[]>>;

/** A family's table, looked up by the upstream's reason. */
export type StopReasons = ReadonlyMap<string, FinishReason>;

const LISTED: readonly Exclude<FinishReason, 'stop'>[] = ['length', 'tool_calls', 'content_filter'];

export const stopReasons = (table: StopReasonTable): StopReasons => {
  const m = new Map<string, FinishReason>();
  for (const canonical of LISTED) for (const r of table[canonical] ?? []) m.set(r, canonical);
  return m;
};

/**
 * The canonical finish reason of an upstream's stop reason: a listed one as listed; any other (the
 * family's normal end, a reason new to the gateway, none at all) `otherwise` — `stop`, or, for a
 * family without a tool-call reason, `tool_calls` when the answer called tools.
 */
export const mapStopReason = (table: StopReasons, reason: string | undefined, otherwise: FinishReason = 'stop'): FinishReason =>
  (reason === undefined ? undefined : table.get(reason)) ?? otherwise;
