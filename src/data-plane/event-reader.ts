import type { StreamEvent } from '../canonical/types.ts';
import { upstreamBounds } from '../core/upstream-bounds.ts';
import { createFrameParser } from '../providers/framing.ts';
import type { HttpProviderAdapter, StreamDecoder, UpstreamFrame } from '../providers/types.ts';
import { pullEvents, type Relay } from './relay.ts';

/** Pull-based reader of an upstream body: bytes → frames → canonical events. */
export const eventReader = (
  adapter: HttpProviderAdapter,
  decoder: StreamDecoder,
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  relay?: Relay,
  fail?: (e: unknown) => unknown,
) => {
  const reader = body.getReader();
  const framer = createFrameParser(adapter.framing, upstreamBounds.maxStreamEventBytes);
  const decode = (frames: UpstreamFrame[]): StreamEvent[] => {
    const out: StreamEvent[] = [];
    for (const f of frames) {
      const events = decoder.push(f);
      for (const ev of events) out.push(ev);
      relay?.frame(f, events);
    }
    return out;
  };
  return pullEvents(
    reader,
    signal,
    (chunk) => decode(framer.push(chunk)),
    () => {
      const tail = decode(framer.flush());
      for (const ev of decoder.end()) tail.push(ev);
      return tail;
    },
    fail,
  );
};
