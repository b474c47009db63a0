import { serversFor } from '../../mcp/credentials.ts';
import { bareMcpMessage } from '../../mcp/error-text.ts';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { CanonicalResponse, JsonObject, JsonValue, StreamEvent, ToolDefinition, Usage } from '../../canonical/types.ts';
import { emptyUsage } from '../../canonical/types.ts';
import { asGatewayError, GatewayError } from '../../core/errors.ts';
import { argumentsObject, textParts } from '../../formats/shared.ts';
import type { ClientFormatCodec, EncodeContext, StreamEncoder } from '../../formats/types.ts';
import type { McpToolSession } from '../../mcp/in-process.ts';
import type { Attempt } from '../../pipeline/context.ts';
import { dispatchComplete, dispatchStream, type OpenStream } from '../dispatch.ts';
import type { InferenceServing } from '../deps.ts';
import { jsonResponse } from '../../pipeline/answer.ts';
import { errorResponse, sseResponse, type StreamSummary } from '../respond.ts';
import type { HostedMcp } from './prepare.ts';
import { allowedTool, functionName, type HostedTool, needsApproval } from './tools.ts';
import { type HostedName, HostedWriter, type McpCallItem, type RoundEnd } from './writer.ts';

/**
 * Serves a Responses request whose `mcp` tools the gateway runs (hosted-mcp/prepare.ts), for
 * every upstream: each profile's tools (as `/mcp/{profileId}` lists them, then `allowed_tools`)
 * are offered to the model as function tools; approved calls from the input run first; then the
 * model is asked, its calls of those tools run through the profile in process (mcp/in-process.ts:
 * the records, limits and guardrails of `/mcp`), their results are fed back, and the model is
 * asked again — until it answers without calling them, calls one that needs approval (the answer
 * ends with `mcp_approval_request` items), or calls one of the client's own functions. At most
 * MAX_ROUNDS upstream requests: the last is sent with `tool_choice: none`, so the model answers.
 * One request record, its usage the sum of every round's, its attempts every round's.
 */

export const MAX_ROUNDS = 8;

interface Offered {
  tool: HostedTool;
  session: McpToolSession;
  name: string;
  approval: boolean;
}

interface Ran {
  text: string;
  isError: boolean;
}

const toJson = (v: unknown): JsonValue => {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, toJson(x)]),
    );
  return null;
};
const toObject = (v: unknown): JsonObject => {
  const j = toJson(v);
  return j !== null && typeof j === 'object' && !Array.isArray(j) ? j : {};
};

const addUsage = (a: Usage, b: Usage): Usage => {
  const sum = (x: number | undefined, y: number | undefined): number | undefined =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  const out: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  const cached = sum(a.cachedInputTokens, b.cachedInputTokens);
  const writes = sum(a.cacheWriteTokens, b.cacheWriteTokens);
  const reasoning = sum(a.reasoningTokens, b.reasoningTokens);
  return {
    ...out,
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
    ...(writes !== undefined ? { cacheWriteTokens: writes } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  };
};

/** A tool result as text: its text content, else its structured content, else its content as JSON. */
/** A JSON-RPC error answered by the MCP server (the SDK's McpError), told apart without loading the SDK here. */
const isJsonRpcError = (e: unknown): e is Error & { code: number } =>
  e instanceof Error && e.name === 'McpError' && 'code' in e && typeof e.code === 'number';

const resultText = (r: CallToolResult): string => {
  const texts = r.content.flatMap((c) => (c.type === 'text' ? [c.text] : []));
  if (texts.length > 0) return texts.join('\n');
  if (r.structuredContent !== undefined) return JSON.stringify(r.structuredContent);
  return r.content.length > 0 ? JSON.stringify(r.content) : '';
};

/** A complete answer as the events the writer takes. */
const eventsOf = (r: CanonicalResponse): StreamEvent[] => {
  const out: StreamEvent[] = [{ type: 'start', id: r.id, model: r.model }];
  if (r.reasoning) out.push({ type: 'reasoning', text: r.reasoning });
  if (r.reasoningSignature) out.push({ type: 'reasoning_signature', signature: r.reasoningSignature });
  if (r.text !== '') out.push({ type: 'text', text: r.text });
  for (const [index, c] of r.toolCalls.entries())
    out.push({ type: 'tool_call_start', index, id: c.id, name: c.name }, { type: 'tool_call_delta', index, arguments: c.arguments });
  out.push({ type: 'finish', reason: r.finishReason });
  return out;
};

const stops = (end: RoundEnd, last: boolean): boolean => last || end.run.length === 0 || end.approvals > 0 || end.client > 0;

class HostedRun {
  private readonly sessions: McpToolSession[] = [];
  private readonly offered = new Map<string, Offered>();
  private readonly abort = new AbortController();
  readonly writer: HostedWriter;
  readonly attempts: Attempt[] = [];
  total: Usage = emptyUsage();
  private closed = false;

  constructor(
    private readonly codec: ClientFormatCodec,
    readonly s: InferenceServing,
    private readonly h: HostedMcp,
    ctx: EncodeContext,
  ) {
    this.writer = new HostedWriter(ctx, (fn) => this.named(fn), s.request.stream);
  }

  private named(fn: string): HostedName | undefined {
    const o = this.offered.get(fn);
    return o ? { label: o.tool.label, name: o.name, approval: o.approval } : undefined;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    for (const session of this.sessions) void session.close().catch(() => undefined);
  }

  /** Sessions opened, tools listed and offered, `mcp_list_tools` items for labels not listed before. */
  async open(): Promise<void> {
    const { s, h } = this;
    const host = s.deps.mcpTools;
    const snapshot = s.deps.snapshots.current;
    const key = s.ctx.key;
    if (!host || !snapshot || !key) throw new GatewayError({ kind: 'unavailable', message: 'MCP tools are not served by this listener.' });
    for (const t of h.tools)
      this.sessions.push(await host.open(key, t.profile, serversFor(snapshot.mcp, key), s.ctx.headers ?? new Headers(), s.ctx.ids));
    const lists: Tool[][] = await Promise.all(this.sessions.map((session) => session.listTools(s.signal)));
    const used = new Set((s.request.tools ?? []).map((t) => t.name));
    const defs: ToolDefinition[] = [];
    h.tools.forEach((tool, i) => {
      const session = this.sessions[i];
      if (!session) return;
      const shown: JsonObject[] = [];
      for (const t of lists[i] ?? []) {
        const readOnly = t.annotations?.readOnlyHint === true;
        if (!allowedTool(tool, t.name, readOnly)) continue;
        const base = functionName(t.name);
        let fn = base;
        for (let n = 2; used.has(fn); n++) fn = `${base.slice(0, 60)}_${n}`;
        used.add(fn);
        this.offered.set(fn, { tool, session, name: t.name, approval: needsApproval(tool, t.name, readOnly) });
        defs.push({ name: fn, ...(t.description ? { description: t.description } : {}), parameters: toObject(t.inputSchema) });
        shown.push({
          name: t.name,
          input_schema: toJson(t.inputSchema),
          description: t.description ?? null,
          annotations: t.annotations ? toJson(t.annotations) : null,
        });
      }
      if (!h.listed.has(tool.label)) this.writer.listTools(tool.label, shown);
    });
    const tools = [...(s.request.tools ?? []), ...defs];
    if (tools.length > 0) s.request.tools = tools;
    else delete s.request.tools;
  }

  /** One call through its profile: the item gets its output or error; the model gets the text. */
  private async execute(item: McpCallItem): Promise<Ran> {
    let offered: Offered | undefined;
    for (const o of this.offered.values()) if (o.tool.label === item.label && o.name === item.name) offered = o;
    if (!offered) {
      const message = `Tool '${item.name}' is not offered by MCP server '${item.label}' (not listed, or not in allowed_tools).`;
      this.writer.callDone(item, null, { type: 'mcp_protocol_error', code: -32602, message });
      return { text: `Error: ${message}`, isError: true };
    }
    try {
      const r = await offered.session.callTool(item.name, argumentsObject(item.call.arguments), this.abort.signal);
      const text = resultText(r);
      if (r.isError === true) this.writer.callDone(item, null, { type: 'mcp_tool_execution_error', content: toJson(r.content) });
      else this.writer.callDone(item, text, null);
      return { text, isError: r.isError === true };
    } catch (e) {
      if (this.abort.signal.aborted || !isJsonRpcError(e)) throw e;
      const message = bareMcpMessage(e.message);
      this.writer.callDone(item, null, { type: 'mcp_protocol_error', code: e.code, message });
      return { text: `Error: ${message}`, isError: true };
    }
  }

  /** Approved calls of the input run before the model is asked; their outputs fill the conversation. */
  async runApproved(): Promise<void> {
    for (const a of this.h.approved) {
      const item = this.writer.approvedCall(a.approvalId, a.tool.label, a.name, a.arguments);
      const r = await this.execute(item);
      for (const m of this.s.request.messages) {
        if (m.role === 'tool' && m.toolCallId === a.approvalId) {
          m.content = textParts(r.text);
          if (r.isError) m.isError = true;
        }
      }
    }
  }

  /** Runs the round's calls; unless the answer ends here, the turn and its results go into the conversation. */
  async afterRound(end: RoundEnd, round: number): Promise<boolean> {
    const ran = await Promise.all(end.run.map((item) => this.execute(item)));
    if (stops(end, round >= MAX_ROUNDS - 1)) return true;
    const messages = this.s.request.messages;
    messages.push({
      role: 'assistant',
      content: textParts(end.text),
      toolCalls: end.run.map((i) => ({ ...i.call })),
      ...(end.reasoning ? { reasoning: end.reasoning } : {}),
    });
    end.run.forEach((item, i) => {
      const r = ran[i];
      messages.push({
        role: 'tool',
        toolCallId: item.call.id,
        name: item.call.name,
        content: textParts(r?.text ?? ''),
        ...(r?.isError ? { isError: true } : {}),
      });
    });
    // The last round must answer.
    if (round + 1 >= MAX_ROUNDS - 1) this.s.request.toolChoice = 'none';
    return false;
  }

  fail(e: unknown): Response {
    const err = asGatewayError(e);
    this.s.finish({
      status: err.status,
      ...(this.total.inputTokens + this.total.outputTokens > 0 ? { usage: this.total } : {}),
      attempts: this.attempts,
      error: err,
    });
    this.close();
    return errorResponse(err, this.s.ctx.ids, this.codec);
  }

  async complete(): Promise<Response> {
    const { s, writer } = this;
    for (let round = 0; ; round++) {
      const o = await dispatchComplete(s.request, s.plan.route, s.signal, undefined, s.ctx);
      this.attempts.push(...o.attempts);
      if (!o.ok) return this.fail(o.error);
      let r = o.response;
      if (s.output) {
        const view = await s.output.answer({ kind: 'chat', text: r.text, toolCalls: r.toolCalls, finishReason: r.finishReason });
        if (view.kind === 'chat') r = { ...r, text: view.text, toolCalls: [...view.toolCalls] };
      }
      this.total = addUsage(this.total, r.usage);
      for (const ev of eventsOf(r)) writer.push(ev);
      if (await this.afterRound(writer.endRound(), round)) break;
    }
    writer.usage = this.total;
    writer.end();
    const answer = writer.final() ?? {};
    const body = JSON.stringify(answer);
    s.finish({ status: 200, usage: this.total, attempts: this.attempts, responseText: body });
    this.close();
    if (s.state?.keeper) await s.state.keeper.keep(answer);
    return jsonResponse(200, body, s.ctx.ids);
  }

  async stream(): Promise<Response> {
    const { s, writer } = this;
    const first = await dispatchStream(s.request, s.plan.route, s.signal, undefined, s.ctx);
    this.attempts.push(...(first.ok ? first.stream.attempts : first.attempts));
    if (!first.ok) return this.fail(first.error);
    let cur: OpenStream = first.stream;
    let round = 0;
    let offset = 0;
    let width = 0;
    let roundUsage: Usage | undefined;
    let ended = false;
    /** Tool indices made unique across rounds; usage held back and summed (one usage event at the end). */
    const map = (events: readonly StreamEvent[]): StreamEvent[] =>
      events.flatMap((ev): StreamEvent[] => {
        if (ev.type === 'usage') {
          roundUsage = ev.usage;
          return [];
        }
        if (ev.type === 'start') {
          if (ev.usage) roundUsage = ev.usage;
          return [{ type: 'start', id: ev.id, model: ev.model }];
        }
        if (ev.type === 'tool_call_start' || ev.type === 'tool_call_delta') {
          width = Math.max(width, ev.index + 1);
          return [{ ...ev, index: ev.index + offset }];
        }
        return [ev];
      });
    const run = this;
    const open: OpenStream = {
      get target() {
        return cur.target;
      },
      attempts: [],
      first: map(cur.first),
      get controller() {
        return cur.controller;
      },
      abort: (reason) => {
        cur.abort(reason);
        run.close();
      },
      takeRelay: () => writer.take(),
      async next() {
        for (;;) {
          if (ended) return null;
          const events = await cur.next();
          if (events !== null) return map(events);
          run.total = addUsage(run.total, roundUsage ?? emptyUsage());
          roundUsage = undefined;
          offset += width;
          width = 0;
          if (await run.afterRound(writer.endRound(), round)) {
            ended = true;
            return [{ type: 'usage', usage: run.total }];
          }
          round++;
          const o = await dispatchStream(s.request, s.plan.route, s.signal, undefined, s.ctx);
          run.attempts.push(...(o.ok ? o.stream.attempts : o.attempts));
          if (!o.ok) throw o.error;
          cur = o.stream;
          const head = map(cur.first);
          if (head.length > 0) return head;
        }
      },
    };
    const encoder: StreamEncoder = {
      push: (ev) => {
        writer.push(ev);
        return '';
      },
      end: () => writer.end(),
      error: (e) => writer.error(e),
      final: () => writer.final(),
    };
    const ttfbMs = Math.round(performance.now() - s.ctx.t0);
    s.ctx.observers.firstByte(s.ctx, ttfbMs);
    const filter = s.output;
    return sseResponse(open, encoder, s.ctx.ids, {
      idleTimeoutMs: s.plan.route.timeoutMs,
      keepAliveMs: s.deps.keepAliveMs,
      ...(filter ? { filter: (events, final) => filter.events(events, final) } : {}),
      onDone: (sum: StreamSummary) => {
        const usage = sum.error ? addUsage(this.total, roundUsage ?? emptyUsage()) : this.total;
        const response = { text: sum.text, toolCalls: sum.toolCalls.filter(Boolean), finishReason: sum.finishReason ?? null };
        const ended = sum.error ? { error: sum.error, partial: { outputChars: sum.outputChars } } : {};
        s.finish({ status: 200, usage, attempts: this.attempts, ...ended, response, ttfbMs });
        this.close();
        const answer = writer.final();
        if (s.state?.keeper && !sum.error && answer) void s.state.keeper.keep(answer);
      },
    });
  }
}

/** Serves the request (see above). */
export const serveHosted = async (codec: ClientFormatCodec, s: InferenceServing, h: HostedMcp, ctx: EncodeContext): Promise<Response> => {
  const run = new HostedRun(codec, s, h, ctx);
  try {
    await run.open();
    await run.runApproved();
    return await (s.request.stream ? run.stream() : run.complete());
  } catch (e) {
    return run.fail(e);
  }
};
