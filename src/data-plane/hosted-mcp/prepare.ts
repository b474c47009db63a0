import type { JsonObject, JsonValue } from '../../canonical/types.ts';
import { invalidRequest } from '../../core/errors.ts';
import type { ConfigSnapshot, KeySnapshot } from '../../propagation/snapshot.ts';
import type { Prepared } from '../stateful.ts';
import { functionName, type HostedTool, hostedToolOf } from './tools.ts';

/**
 * Before a Responses request is read: its `mcp` tools that name one of the caller's profiles are
 * taken out of `tools` (the gateway offers their tools as function tools when it serves the
 * request, hosted-mcp/run.ts), and the MCP items of the conversation become what every upstream
 * understands:
 *
 * - `mcp_list_tools` is dropped (the tools are offered as functions; a label listed earlier in the
 *   conversation is not listed again in the output, as OpenAI does);
 * - `mcp_call` becomes a `function_call` and its `function_call_output` (the output, or the error);
 * - an `mcp_approval_request` answered by an `mcp_approval_response` in the input: approved, it
 *   becomes a call that runs before the model is asked (its output filled in then); denied, a call
 *   whose output says it was denied. Unanswered requests are dropped; a request whose call already
 *   ran (an `mcp_call` with its `approval_request_id`) is left to that call.
 *
 * `tool_choice: {type: 'mcp', server_label, name?}` for such a tool becomes that function (or
 * `required`). Items and tools of other MCP servers are left alone.
 */

export interface ApprovedCall {
  approvalId: string;
  tool: HostedTool;
  /** The name as the profile lists it. */
  name: string;
  arguments: string;
}

export interface HostedMcp {
  tools: readonly HostedTool[];
  /** Labels whose `mcp_list_tools` is already in the conversation. */
  listed: ReadonlySet<string>;
  /** Approved in this request's input: run before the first round. */
  approved: readonly ApprovedCall[];
}

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');

/** What the model is told of a call the client denied. */
export const deniedOutput = (reason: string): string => `The user denied this tool call.${reason ? ` Reason: ${reason}` : ''}`;

/** The text of an mcp_call item's error, as the model saw it. */
const errorText = (e: JsonValue | undefined): string => {
  if (typeof e === 'string') return `Error: ${e}`;
  if (!isObject(e)) return 'Error';
  if (typeof e.message === 'string') return `Error: ${e.message}`;
  return `Error: ${JSON.stringify(e.content ?? e)}`;
};

const call = (callId: string, name: string, args: string, output: string): JsonObject[] => [
  { type: 'function_call', call_id: callId, name: functionName(name), arguments: args },
  { type: 'function_call_output', call_id: callId, output },
];

const rewriteInput = (
  input: readonly JsonValue[],
  byLabel: ReadonlyMap<string, HostedTool>,
): { input: JsonValue[]; listed: Set<string>; approved: ApprovedCall[] } => {
  const requests = new Map<string, JsonObject>();
  const answers = new Map<string, { approve: boolean; reason: string }>();
  const ran = new Set<string>();
  input.forEach((item) => {
    if (!isObject(item)) return;
    if (item.type === 'mcp_approval_request' && typeof item.id === 'string') requests.set(item.id, item);
    if (item.type === 'mcp_call' && typeof item.approval_request_id === 'string') ran.add(item.approval_request_id);
  });
  input.forEach((item, i) => {
    if (!isObject(item) || item.type !== 'mcp_approval_response') return;
    const id = item.approval_request_id;
    if (typeof id !== 'string' || id === '')
      throw invalidRequest("An mcp_approval_response needs the 'approval_request_id' it answers.", `input.${i}.approval_request_id`);
    const request = requests.get(id);
    if (request && !byLabel.has(str(request.server_label))) return; // another server's: left alone
    if (!request)
      throw invalidRequest(
        `No mcp_approval_request with id '${id}' in the conversation: send it in the input or continue with previous_response_id.`,
        `input.${i}.approval_request_id`,
      );
    if (typeof item.approve !== 'boolean') throw invalidRequest("'approve' must be a boolean.", `input.${i}.approve`);
    answers.set(id, { approve: item.approve, reason: str(item.reason) });
  });

  const out: JsonValue[] = [];
  const listed = new Set<string>();
  const approved: ApprovedCall[] = [];
  for (const item of input) {
    const tool = isObject(item) ? byLabel.get(str(item.server_label)) : undefined;
    if (!isObject(item)) {
      out.push(item);
      continue;
    }
    if (item.type === 'mcp_approval_response' && answers.has(str(item.approval_request_id))) continue;
    if (!tool) {
      out.push(item);
      continue;
    }
    if (item.type === 'mcp_list_tools') listed.add(tool.label);
    else if (item.type === 'mcp_call') {
      const output = item.error !== undefined && item.error !== null ? errorText(item.error) : str(item.output);
      out.push(...call(str(item.id), str(item.name), str(item.arguments), output));
    } else if (item.type === 'mcp_approval_request') {
      const id = str(item.id);
      const answer = answers.get(id);
      if (ran.has(id) || !answer) continue;
      // Approved: the output is filled in once the call ran (run.ts).
      out.push(...call(id, str(item.name), str(item.arguments), answer.approve ? '' : deniedOutput(answer.reason)));
      if (answer.approve) approved.push({ approvalId: id, tool, name: str(item.name), arguments: str(item.arguments) });
    } else out.push(item);
  }
  return { input: out, listed, approved };
};

/** The request with the gateway's MCP tools taken over (see above); unchanged when it has none. */
export const prepareHosted = (
  prepared: Prepared,
  key: KeySnapshot | undefined,
  headers: Headers | undefined,
  snapshot: ConfigSnapshot | undefined,
): Prepared => {
  const body = prepared.body;
  if (!key || !headers || !snapshot || !isObject(body) || !Array.isArray(body.tools)) return prepared;
  const hosted: HostedTool[] = [];
  const rest: JsonValue[] = [];
  body.tools.forEach((t, i) => {
    const h = isObject(t) ? hostedToolOf(t, i, key, headers, snapshot) : undefined;
    if (h) hosted.push(h);
    else rest.push(t);
  });
  if (hosted.length === 0) return prepared;
  const byLabel = new Map<string, HostedTool>();
  for (const h of hosted) {
    if (byLabel.has(h.label))
      throw invalidRequest(`Two mcp tools have the server_label '${h.label}'; labels must be unique.`, `${h.param}.server_label`);
    byLabel.set(h.label, h);
  }
  const out: JsonObject = { ...body, tools: rest };
  let listed = new Set<string>();
  let approved: ApprovedCall[] = [];
  if (Array.isArray(body.input)) {
    const r = rewriteInput(body.input, byLabel);
    out.input = r.input;
    listed = r.listed;
    approved = r.approved;
  }
  const choice = body.tool_choice;
  if (isObject(choice) && choice.type === 'mcp' && byLabel.has(str(choice.server_label))) {
    out.tool_choice =
      typeof choice.name === 'string' && choice.name !== '' ? { type: 'function', name: functionName(choice.name) } : 'required';
  }
  return { ...prepared, body: out, hosted: { tools: hosted, listed, approved } };
};
