import { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import { upstreamBounds } from '../core/upstream-bounds.ts';
import { A2A_STREAM_IDLE_MS } from './pin.ts';
import type { Binding } from './binding.ts';
import { idsOfResult, upstreamFailure } from './rpc.ts';

/**
 * An agent's SSE answer relayed event by event as it arrives (never the whole stream held): each
 * complete event is read for the task it names and passed through the output guardrails (text
 * parts, rewritten when one redacts); an event the guardrails block, an upstream that breaks off
 * or stays quiet past A2A_STREAM_IDLE_MS (5 min) ends the stream with the binding's error event. `end`
 * is called exactly once, with the task seen and the error, if any.
 */

export interface RelayOptions {
  agentId: string;
  /** Where an event's result sits, and the error event (JSON-RPC or HTTP+JSON). */
  binding: Pick<Binding, 'eventResult' | 'errorEvent'>;
  guard: (result: unknown) => Promise<boolean>;
  end: (outcome: { taskId?: string; error?: GatewayError }) => void;
}

const enc = new TextEncoder();
const EVENT_END = /\r?\n\r?\n/;

const dataOf = (event: string): string =>
  event
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
    .join('\n');

export const relayStream = (body: ReadableStream<Uint8Array>, abort: AbortController, o: RelayOptions): ReadableStream<Uint8Array> => {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let taskId: string | undefined;
  let ended = false;
  const end = (error?: GatewayError): void => {
    if (ended) return;
    ended = true;
    o.end({ ...(taskId ? { taskId } : {}), ...(error ? { error } : {}) });
  };
  const broken = (detail: string): GatewayError => upstreamFailure(o.agentId, 'broken', detail);
  /** One complete event, as it goes to the client. */
  const relay = async (event: string): Promise<string> => {
    const data = dataOf(event);
    if (data === '') return `${event}\n\n`;
    let v: unknown;
    try {
      v = JSON.parse(data);
    } catch {
      throw broken(' (an event that is not JSON)');
    }
    if (!isRecord(v)) throw broken(' (an event that is not a JSON object)');
    const result = o.binding.eventResult(v);
    if (!taskId) taskId = idsOfResult(result).taskId;
    return (await o.guard(result)) ? `data: ${JSON.stringify(v)}\n\n` : `${event}\n\n`;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const idle = setTimeout(() => abort.abort(), A2A_STREAM_IDLE_MS);
      try {
        const { done, value } = await reader.read();
        if (done) {
          if (buffered.trim() !== '') controller.enqueue(enc.encode(await relay(buffered)));
          controller.close();
          end();
          return;
        }
        buffered += decoder.decode(value, { stream: true });
        if (buffered.length > upstreamBounds.a2aMaxMessageBytes) throw broken(' (an event larger than GATEWAY_A2A_MAX_MESSAGE)');
        let m = EVENT_END.exec(buffered);
        while (m) {
          const event = buffered.slice(0, m.index);
          buffered = buffered.slice(m.index + m[0].length);
          controller.enqueue(enc.encode(await relay(event)));
          m = EVENT_END.exec(buffered);
        }
      } catch (e) {
        const err = e instanceof GatewayError ? e : broken(abort.signal.aborted ? ' (it stayed quiet too long)' : '');
        reader.cancel().catch(() => undefined);
        controller.enqueue(enc.encode(o.binding.errorEvent(err)));
        controller.close();
        end(err);
      } finally {
        clearTimeout(idle);
      }
    },
    cancel() {
      abort.abort();
      reader.cancel().catch(() => undefined);
      end();
    },
  });
};
