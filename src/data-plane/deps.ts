import type { CanonicalRequest } from '../canonical/types.ts';
import type { BatchService } from '../core/batches.ts';
import type { McpToolHost } from '../mcp/in-process.ts';
import type { PipelineDeps } from '../pipeline/deps.ts';
import type { EndpointSpec, Serving } from '../pipeline/index.ts';
import type { ResponseCacheStore } from './cache/store.ts';
import type { Conversations } from './conversations.ts';
import type { Stateful } from './stateful.ts';

/** Files and batches on this plane: the store-backed service and the upload limit (GATEWAY_FILE_MAX). */
export interface BatchDeps {
  service: BatchService;
  maxFileBytes: number;
}

/** The data plane's endpoints' dependencies: the pipeline's, and what the endpoints above it use. */
export interface InferenceDeps extends PipelineDeps {
  /** Stored responses and threads (contract §2); references are refused when absent. */
  conversations?: Conversations;
  /** Where cached answers live (project setting `response-cache`, contract §11); no cache when absent. */
  responseCache?: ResponseCacheStore;
  /** `/v1/files` and `/v1/batches` (contract §11): the embedded plane's store-backed service; 501 when absent (separate data planes). */
  batches?: BatchDeps;
  /** The MCP gateway in process: Responses `mcp` tools naming one of the caller's profiles run through it (data-plane/hosted-mcp). */
  mcpTools?: McpToolHost;
}

/** What the chat, Responses and Messages endpoints serve: a canonical request, their stored state, the data plane's dependencies. */
export type InferenceServing = Serving<CanonicalRequest, Stateful, InferenceDeps>;
export type InferenceSpec = EndpointSpec<CanonicalRequest, Stateful, InferenceDeps>;
