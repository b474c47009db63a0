import type { FinishReason, JsonObject, JsonValue, Reasoning, StreamEvent, ToolCall, Usage } from '../../canonical/types.ts';
import { emptyUsage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import {
  functionCallItem,
  functionItemId,
  messageItem,
  messageItemId,
  outputTextPart,
  reasoningItem,
  reasoningItemId,
  responseId,
  responseObject,
  summaryTextPart,
} from '../../formats/responses/response.ts';
import { idSuffix, nowSeconds } from '../../formats/shared.ts';
import { sseEvent } from '../../formats/sse.ts';
import type { EncodeContext } from '../../formats/types.ts';

/**
 * The Responses answer of a request whose `mcp` tools the gateway runs: the output items of every
 * round in order — reasoning, messages, the client's own function calls, and OpenAI's MCP items
 * (`mcp_list_tools`, `mcp_call` with `arguments`/`output`/`error`, `mcp_approval_request`) — one
 * `response` object with the usage of all rounds. Streamed, the events are OpenAI's:
 * `response.created`/`in_progress` once, `response.output_item.added`/`done` per item, text and
 * function-call deltas as usual, `response.mcp_list_tools.in_progress`/`completed`,
 * `response.mcp_call.in_progress`, `response.mcp_call_arguments.delta`/`done`,
 * `response.mcp_call.completed`/`failed`, and one `response.completed`. Not streamed, the same
 * items are collected without events.
 */

/** What a tool name of the model means: one of the gateway's MCP tools (undefined: the client's own function). */
export interface HostedName {
  label: string;
  /** The name as the profile lists it. */
  name: string;
  approval: boolean;
}

export interface McpCallItem {
  kind: 'mcp_call';
  id: string;
  label: string;
  name: string;
  call: ToolCall;
  approvalId?: string;
  open: boolean;
  /** Set once it ran. */
  result?: { output: string | null; error: JsonObject | null };
}

type Item =
  | { kind: 'message'; id: string; text: string; open: boolean }
  | { kind: 'reasoning'; id: string; text: string; signature?: string; open: boolean }
  | { kind: 'function_call'; id: string; call: ToolCall; open: boolean }
  | McpCallItem
  | { kind: 'approval'; id: string; label: string; name: string; call: ToolCall; open: boolean }
  | { kind: 'list'; id: string; label: string; tools: JsonObject[]; open: false };

/** What the model asked for in one round. */
export interface RoundEnd {
  text: string;
  reasoning?: Reasoning;
  /** Calls of the gateway's tools to run now. */
  run: McpCallItem[];
  approvals: number;
  /** Calls of the client's own functions. */
  client: number;
}

export class HostedWriter {
  private seq = 0;
  private started = false;
  private closed = false;
  private buffer = '';
  private readonly items: Item[] = [];
  private readonly toolItems = new Map<number, number>();
  private counters = { message: 0, reasoning: 0, function: 0, mcp: 0 };
  private roundStart = 0;
  private finishReason: FinishReason = 'stop';
  private finalObject: JsonObject | undefined;
  private readonly createdAt: number;
  private readonly hex: string;
  usage: Usage = emptyUsage();

  constructor(
    private readonly ctx: EncodeContext,
    private readonly hosted: (fn: string) => HostedName | undefined,
    private readonly streaming: boolean,
  ) {
    this.createdAt = nowSeconds(ctx);
    this.hex = idSuffix(ctx);
  }

  private emit(type: string, payload: JsonObject): void {
    if (!this.streaming || this.closed) return;
    this.start();
    this.buffer += sseEvent(type, { type, sequence_number: this.seq++, ...payload });
  }

  private snapshot(status: 'in_progress' | 'completed' | 'incomplete', final: boolean): JsonObject {
    const output = final ? this.items.map((i) => this.json(i)) : [];
    return responseObject({
      id: responseId('', this.ctx),
      createdAt: this.createdAt,
      model: this.ctx.model,
      status,
      ...(final
        ? { finishReason: this.finishReason, outputText: this.items.map((i) => (i.kind === 'message' ? i.text : '')).join('') }
        : {}),
      output,
      usage: final ? this.usage : null,
      ...(this.ctx.responseFields ? { fields: this.ctx.responseFields } : {}),
    });
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const s = this.snapshot('in_progress', false);
    for (const type of ['response.created', 'response.in_progress'])
      this.buffer += sseEvent(type, { type, sequence_number: this.seq++, response: s });
  }

  private json(i: Item, done = true): JsonObject {
    switch (i.kind) {
      case 'message':
        return messageItem(i.id, i.text, done ? 'completed' : 'in_progress');
      case 'reasoning':
        return reasoningItem(i.id, i.text, i.signature, done ? 'completed' : 'in_progress');
      case 'function_call':
        return functionCallItem(i.id, i.call, done ? 'completed' : 'in_progress');
      case 'list':
        return { id: i.id, type: 'mcp_list_tools', server_label: i.label, tools: i.tools };
      case 'approval':
        return { id: i.id, type: 'mcp_approval_request', server_label: i.label, name: i.name, arguments: i.call.arguments };
      case 'mcp_call': {
        const r = i.result;
        return {
          id: i.id,
          type: 'mcp_call',
          server_label: i.label,
          name: i.name,
          arguments: i.call.arguments,
          approval_request_id: i.approvalId ?? null,
          output: r ? r.output : null,
          error: r ? r.error : null,
          status: !r ? 'in_progress' : r.error ? 'failed' : 'completed',
        };
      }
    }
  }

  private add(item: Item): number {
    this.items.push(item);
    const outputIndex = this.items.length - 1;
    if (item.kind !== 'approval') this.emit('response.output_item.added', { output_index: outputIndex, item: this.json(item, false) });
    return outputIndex;
  }

  private current(): Item | undefined {
    const last = this.items[this.items.length - 1];
    return last?.open ? last : undefined;
  }

  private closeCurrent(): void {
    const item = this.current();
    if (!item) return;
    item.open = false;
    const at = { item_id: item.id, output_index: this.items.length - 1 };
    if (item.kind === 'message') {
      this.emit('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] });
      this.emit('response.content_part.done', { ...at, content_index: 0, part: outputTextPart(item.text) });
    } else if (item.kind === 'reasoning') {
      this.emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text });
      this.emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: summaryTextPart(item.text) });
    } else if (item.kind === 'function_call') this.emit('response.function_call_arguments.done', { ...at, arguments: item.call.arguments });
    else if (item.kind === 'mcp_call') {
      // Done once it ran (callDone).
      this.emit('response.mcp_call_arguments.done', { ...at, arguments: item.call.arguments });
      return;
    } else if (item.kind === 'approval') {
      this.emit('response.output_item.added', { output_index: at.output_index, item: this.json(item) });
    }
    this.emit('response.output_item.done', { output_index: at.output_index, item: this.json(item) });
  }

  private text(delta: string): void {
    let item = this.current();
    if (item?.kind !== 'message') {
      this.closeCurrent();
      item = { kind: 'message', id: messageItemId(this.ctx, this.counters.message++), text: '', open: true };
      const outputIndex = this.add(item);
      this.emit('response.content_part.added', { item_id: item.id, output_index: outputIndex, content_index: 0, part: outputTextPart('') });
    }
    item.text += delta;
    this.emit('response.output_text.delta', {
      item_id: item.id,
      output_index: this.items.length - 1,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  private reasoning(delta: string): void {
    let item = this.current();
    if (item?.kind !== 'reasoning') {
      this.closeCurrent();
      item = { kind: 'reasoning', id: reasoningItemId(this.ctx, this.counters.reasoning++), text: '', open: true };
      const outputIndex = this.add(item);
      this.emit('response.reasoning_summary_part.added', {
        item_id: item.id,
        output_index: outputIndex,
        summary_index: 0,
        part: summaryTextPart(''),
      });
    }
    item.text += delta;
    this.emit('response.reasoning_summary_text.delta', { item_id: item.id, output_index: this.items.length - 1, summary_index: 0, delta });
  }

  private toolStart(index: number, id: string, fn: string): void {
    this.closeCurrent();
    const call: ToolCall = { id, name: fn, arguments: '' };
    const h = this.hosted(fn);
    let item: Item;
    if (!h) item = { kind: 'function_call', id: functionItemId(this.ctx, this.counters.function++), call, open: true };
    else if (h.approval)
      item = { kind: 'approval', id: `mcpr_${this.hex}_${this.counters.mcp++}`, label: h.label, name: h.name, call, open: true };
    else item = { kind: 'mcp_call', id: `mcp_${this.hex}_${this.counters.mcp++}`, label: h.label, name: h.name, call, open: true };
    const outputIndex = this.add(item);
    this.toolItems.set(index, outputIndex);
    if (item.kind === 'mcp_call') this.emit('response.mcp_call.in_progress', { item_id: item.id, output_index: outputIndex });
  }

  private toolDelta(index: number, delta: string): void {
    const outputIndex = this.toolItems.get(index);
    const item = outputIndex === undefined ? undefined : this.items[outputIndex];
    if (!item || outputIndex === undefined || (item.kind !== 'function_call' && item.kind !== 'mcp_call' && item.kind !== 'approval'))
      return;
    item.call.arguments += delta;
    if (!item.open) return;
    if (item.kind === 'function_call')
      this.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta });
    else if (item.kind === 'mcp_call')
      this.emit('response.mcp_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta });
  }

  push(ev: StreamEvent): void {
    if (this.closed) return;
    switch (ev.type) {
      case 'start':
        this.start();
        return;
      case 'text':
        if (ev.text !== '') this.text(ev.text);
        return;
      case 'reasoning':
        if (ev.text !== '') this.reasoning(ev.text);
        return;
      case 'reasoning_signature': {
        const item = this.current();
        if (item?.kind === 'reasoning') item.signature = (item.signature ?? '') + ev.signature;
        return;
      }
      case 'tool_call_start':
        this.toolStart(ev.index, ev.id, ev.name);
        return;
      case 'tool_call_delta':
        this.toolDelta(ev.index, ev.arguments);
        return;
      case 'finish':
        this.finishReason = ev.reason;
        return;
      case 'usage':
        this.usage = ev.usage;
        return;
    }
  }

  /** The model's round ended: what it said and asked for. */
  endRound(): RoundEnd {
    this.closeCurrent();
    const round = this.items.slice(this.roundStart);
    this.roundStart = this.items.length;
    this.toolItems.clear();
    let text = '';
    let reasoning: Reasoning | undefined;
    const run: McpCallItem[] = [];
    let approvals = 0;
    let client = 0;
    for (const i of round) {
      if (i.kind === 'message') text += i.text;
      else if (i.kind === 'reasoning' && i.signature) reasoning = { text: i.text, signature: i.signature };
      else if (i.kind === 'mcp_call') run.push(i);
      else if (i.kind === 'approval') approvals++;
      else if (i.kind === 'function_call') client++;
    }
    return { text, ...(reasoning ? { reasoning } : {}), run, approvals, client };
  }

  /** An `mcp_list_tools` item (listed before the model is asked). */
  listTools(label: string, tools: JsonObject[]): void {
    const item: Item = { kind: 'list', id: `mcpl_${this.hex}_${this.counters.mcp++}`, label, tools: [], open: false };
    const outputIndex = this.add(item);
    this.emit('response.mcp_list_tools.in_progress', { item_id: item.id, output_index: outputIndex });
    item.tools = tools;
    this.emit('response.mcp_list_tools.completed', { item_id: item.id, output_index: outputIndex });
    this.emit('response.output_item.done', { output_index: outputIndex, item: this.json(item) });
  }

  /** An approved call that runs before the model is asked. */
  approvedCall(approvalId: string, label: string, name: string, args: string): McpCallItem {
    this.closeCurrent();
    const item: McpCallItem = {
      kind: 'mcp_call',
      id: `mcp_${this.hex}_${this.counters.mcp++}`,
      label,
      name,
      call: { id: approvalId, name, arguments: args },
      approvalId,
      open: false,
    };
    const outputIndex = this.add(item);
    this.emit('response.mcp_call.in_progress', { item_id: item.id, output_index: outputIndex });
    if (args !== '') this.emit('response.mcp_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: args });
    this.emit('response.mcp_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: args });
    this.roundStart = this.items.length;
    return item;
  }

  /** A call ran: its output or error. */
  callDone(item: McpCallItem, output: string | null, error: JsonObject | null): void {
    item.result = { output, error };
    const outputIndex = this.items.indexOf(item);
    this.emit(error ? 'response.mcp_call.failed' : 'response.mcp_call.completed', { item_id: item.id, output_index: outputIndex });
    this.emit('response.output_item.done', { output_index: outputIndex, item: this.json(item) });
  }

  /** SSE text written since the last call. */
  take(): string {
    const out = this.buffer;
    this.buffer = '';
    return out;
  }

  /** The final `response` object (and, streaming, `response.completed` after what is pending). */
  end(): string {
    if (this.closed) return this.take();
    this.closeCurrent();
    const status = this.finishReason === 'length' || this.finishReason === 'content_filter' ? 'incomplete' : 'completed';
    this.finalObject = this.snapshot(status, true);
    this.emit('response.completed', { response: this.finalObject });
    this.closed = true;
    return this.take();
  }

  final(): JsonObject | undefined {
    return this.finalObject;
  }

  error(e: GatewayError): string {
    if (this.closed) return this.take();
    const err: { [k: string]: JsonValue } = { code: e.errorCode, message: e.message, param: e.param };
    this.emit('error', err);
    this.closed = true;
    return this.take();
  }
}
