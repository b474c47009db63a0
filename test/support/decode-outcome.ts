import type { StreamEvent } from '../../src/canonical/types.ts';
import { createChatCompletionsStreamDecoder } from '../../src/providers/openai-compatible/stream.ts';

/** What decoding one chunk gave: its events, or the failure's text. */
export type Outcome = { events: StreamEvent[] } | { error: string };

export const run = (f: () => StreamEvent[]): Outcome => {
  try {
    return { events: f() };
  } catch (e) {
    return { error: String(e) };
  }
};

/** A fresh Chat Completions decoder fed `before` (whose events are dropped), then `data`. */
export const chatAfter = (before: readonly string[], data: string): Outcome => {
  const d = createChatCompletionsStreamDecoder('openai');
  for (const b of before) d.push({ data: b });
  return run(() => d.push({ data }));
};

/**
 * A whole Chat stream (`chunks`, the first being the role chunk) decoded by one decoder, and the
 * reference: every chunk decoded in full by a fresh decoder after the role chunk (only the
 * stream's first start event kept). Returns both, and the texts of the one decoder.
 */
export const chatStreamBothWays = (chunks: readonly string[]): { events: StreamEvent[]; want: StreamEvent[]; texts: string[] } => {
  const role = chunks[0] as string;
  const d = createChatCompletionsStreamDecoder('openai');
  const events = chunks.flatMap((data) => d.push({ data }));
  const want = chunks
    .flatMap((data) => {
      const f = createChatCompletionsStreamDecoder('openai');
      if (data === role) return f.push({ data });
      f.push({ data: role });
      return f.push({ data });
    })
    .filter((e, i) => e.type !== 'start' || i === 0);
  return { events, want, texts: events.flatMap((e) => (e.type === 'text' ? [e.text] : [])) };
};
