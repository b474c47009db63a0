import {
  type InputRequests,
  type InputRequiredResult,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  specTypeSchemas,
} from '@modelcontextprotocol/client';
import { isRecord } from '../core/json.ts';

/**
 * An upstream's `input_required` answer (MCP 2026-07-28) as the gateway hands it on: each input
 * request checked by its own schema — only elicitation, sampling and roots may be asked of a
 * client — and `requestState` unchanged. Checked inside the governed call (mcp/operations.ts), so a
 * request the gateway cannot relay fails that call, and its record says so.
 */

const schemaOf = (method: unknown): 'ElicitRequest' | 'CreateMessageRequest' | 'ListRootsRequest' | undefined =>
  method === 'elicitation/create'
    ? 'ElicitRequest'
    : method === 'sampling/createMessage'
      ? 'CreateMessageRequest'
      : method === 'roots/list'
        ? 'ListRootsRequest'
        : undefined;

const askable = async (key: string, value: unknown): Promise<InputRequests[string]> => {
  const name = isRecord(value) ? schemaOf(value.method) : undefined;
  const checked = name ? await specTypeSchemas[name]['~standard'].validate(value) : undefined;
  if (!checked || checked.issues)
    throw new ProtocolError(ProtocolErrorCode.InternalError, `The MCP server asked for input the gateway cannot relay ('${key}').`);
  return checked.value;
};

/** `got` with its input requests checked when it is an `input_required` answer; else `got` as it came. */
export const checkedInputRequired = async <T>(got: T | InputRequiredResult): Promise<T | InputRequiredResult> => {
  if (!isInputRequiredResult(got)) return got;
  const inputRequests: InputRequests = {};
  for (const [key, req] of Object.entries(got.inputRequests ?? {})) inputRequests[key] = await askable(key, req);
  return {
    ...got,
    ...(Object.keys(inputRequests).length > 0 ? { inputRequests } : {}),
  };
};
