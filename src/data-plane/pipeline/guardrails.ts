import type { StreamEvent, ToolCall } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import type { RequestContext } from './context.ts';

/** A complete answer as output guardrails see it. */
export type AnswerView =
  | { kind: 'chat'; text: string; toolCalls: readonly ToolCall[]; finishReason: string | null }
  /** Extra endpoints: the parsed JSON answer, or undefined for binary/streamed answers. */
  | { kind: 'extra'; json: unknown; contentType: string };

/**
 * Output guardrails: look at what the upstream answered before the client gets it. A guardrail
 * withholds an answer by returning the error the client gets instead (non-streaming), or ends a
 * stream with the format's error event (streaming; what was already sent stays sent). Guardrails
 * read canonical content, so while any is configured the same-format pass-through is off and
 * every answer goes through the canonical path.
 */
export interface OutputGuardrail {
  readonly name: string;
  /** A whole non-streamed answer, before any byte of it is sent. */
  checkAnswer(ctx: Readonly<RequestContext>, answer: AnswerView): GatewayError | undefined;
  /** One batch of stream events, before it is written. */
  checkEvents(ctx: Readonly<RequestContext>, events: readonly StreamEvent[]): GatewayError | undefined;
}

export const checkAnswer = (guardrails: readonly OutputGuardrail[], ctx: RequestContext, answer: () => AnswerView): void => {
  if (guardrails.length === 0) return;
  const view = answer();
  for (const g of guardrails) {
    const refusal = g.checkAnswer(ctx, view);
    if (refusal) throw refusal;
  }
};

export const checkEvents = (guardrails: readonly OutputGuardrail[], ctx: RequestContext, events: readonly StreamEvent[]): void => {
  for (const g of guardrails) {
    const refusal = g.checkEvents(ctx, events);
    if (refusal) throw refusal;
  }
};
