import { BATCH_ENDPOINTS, type BatchCaller, type BatchEndpoint, type RunLine } from '../core/batches.ts';
import { GatewayError, invalidApiKey, invalidRequest } from '../core/errors.ts';
import { requestUuid } from '../core/ids.ts';
import { describeError, log } from '../core/log.ts';
import { isRecord } from '../core/json.ts';
import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';
import { handleExtra } from './extra.ts';
import { handleInference } from './inference.ts';
import { bodyTooLarge } from '../pipeline/body.ts';
import type { BatchDeps, InferenceDeps } from './deps.ts';
import { withCaller } from '../pipeline/index.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { idHeaders, jsonResponse } from '../pipeline/answer.ts';
import { errorResponse } from './respond.ts';

/**
 * `/v1/files` and `/v1/batches` (contract §11) in OpenAI's shapes, per project. They are served by
 * the embedded data plane, whose process holds the store (deps.batches); a separate data plane
 * answers 501 `unsupported_endpoint` (docs/client-compatibility.md, "Files and batches").
 */

const notHere = (): GatewayError =>
  new GatewayError({
    kind: 'unsupported_endpoint',
    status: 501,
    message: 'Files and batches are served by the embedded data plane (the management process) only; send /v1/files and /v1/batches there.',
  });

const notFound = (what: string, id: string): GatewayError =>
  new GatewayError({ kind: 'not_found', message: `No ${what} found with id '${id}'.` });

const callerOf = (key: KeySnapshot): BatchCaller => ({ projectUuid: key.project.id, keyId: key.id });

const pageOf = (req: Request, max: number, dflt: number): { after?: string; limit: number } => {
  const q = new URL(req.url).searchParams;
  const raw = q.get('limit');
  const limit = raw === null ? dflt : Number(raw);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > max)
    throw invalidRequest(`'limit' must be an integer from 1 to ${max}.`, 'limit');
  const after = q.get('after');
  return after ? { after: plain(after, 'after'), limit } : { limit };
};

/** C0 and C1 control characters and DEL: no file name, id or query value carries one (NUL is what the store cannot hold at all). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A value from the client for the store: refused (400 naming `param`) with a control character or a lone surrogate. */
const plain = (value: string, param: string, what = `'${param}'`): string => {
  if (CONTROL.test(value) || !value.isWellFormed())
    throw invalidRequest(`${what} must not contain control characters or unpaired surrogates.`, param);
  return value;
};

/** The id in the path (`param` names it in a refusal); a malformed escape is a 400, not a 500. */
const idOf = (req: Request, at: number, param: string): string => {
  let id: string;
  try {
    id = decodeURIComponent(new URL(req.url).pathname.split('/')[at] ?? '');
  } catch {
    throw invalidRequest(`'${param}' in the path is not a valid percent-encoded value.`, param);
  }
  return plain(id, param);
};

type Handler = (b: BatchDeps, key: KeySnapshot, req: Request, ids: RequestIds) => Promise<Response>;

/**
 * Runs a handler through the door with the plane's service (`path` names the endpoint in records,
 * ids as `{id}`), or refuses with 501 on a plane without one, before looking at the caller.
 */
export const batchRoute =
  (path: string, handler: Handler) =>
  (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> => {
    const b = deps.batches;
    if (!b) return Promise.resolve(errorResponse(notHere(), ids));
    return withCaller(
      deps,
      path,
      req,
      ids,
      (_ctx, door) => handler(b, door.key, req, ids),
      (g, e) => {
        // Not a refusal of ours: said in the log (the client sees only an internal error).
        if (g.kind === 'internal' && !(e instanceof GatewayError))
          log.error('a files or batches request failed', {
            requestId: ids.requestId,
            path: new URL(req.url).pathname,
            error: describeError(e),
          });
        return errorResponse(g, ids);
      },
    );
  };

const json = (value: unknown, ids: RequestIds): Response => jsonResponse(200, JSON.stringify(value), ids);

export const uploadFile: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  let form: FormData;
  try {
    form = await req.formData();
  } catch {
    throw invalidRequest("The body must be multipart/form-data with 'file' and 'purpose'.", 'file');
  }
  const purpose = form.get('purpose');
  if (purpose !== 'batch') throw invalidRequest("'purpose' must be 'batch' (the only purpose this gateway stores).", 'purpose');
  const file = form.get('file');
  if (!(file instanceof Blob)) throw invalidRequest("'file' is required and must be a file.", 'file', 'missing_required_parameter');
  if (file.size > b.maxFileBytes) throw bodyTooLarge(b.maxFileBytes);
  const name = file instanceof File && file.name ? plain(file.name, 'file', "The filename of 'file'") : 'upload.jsonl';
  const content = await file.text();
  // JSON Lines never hold a raw NUL, and the store cannot.
  if (content.includes('\0')) throw invalidRequest("'file' must be UTF-8 text without NUL characters (JSON Lines).", 'file');
  return json(await b.service.createFile(caller, purpose, name.slice(0, 255), content), ids);
};

export const listFiles: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  const purpose = new URL(req.url).searchParams.get('purpose');
  if (purpose) plain(purpose, 'purpose');
  return json(await b.service.listFiles(caller, { ...pageOf(req, 10_000, 10_000), ...(purpose ? { purpose } : {}) }), ids);
};

export const getFile: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  const id = idOf(req, 3, 'file_id');
  const file = await b.service.getFile(caller, id);
  if (!file) throw notFound('file', id);
  return json(file, ids);
};

export const deleteFile: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  const id = idOf(req, 3, 'file_id');
  if (!(await b.service.deleteFile(caller, id))) throw notFound('file', id);
  return json({ id, object: 'file', deleted: true }, ids);
};

export const fileContent: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  const id = idOf(req, 3, 'file_id');
  const content = await b.service.fileContent(caller, id);
  if (content === undefined) throw notFound('file', id);
  return new Response(content, { status: 200, headers: { 'content-type': 'application/octet-stream', ...idHeaders(ids) } });
};

const isEndpoint = (v: unknown): v is BatchEndpoint => typeof v === 'string' && (BATCH_ENDPOINTS as readonly string[]).includes(v);

/** `metadata`: up to 16 string pairs, keys up to 64 and values up to 512 characters (OpenAI's bounds). */
const metadataOf = (v: unknown): Record<string, string> | null => {
  if (v === undefined || v === null) return null;
  if (!isRecord(v)) throw invalidRequest("'metadata' must be an object of strings.", 'metadata');
  const out: Record<string, string> = {};
  const entries = Object.entries(v);
  if (entries.length > 16) throw invalidRequest("'metadata' has at most 16 keys.", 'metadata');
  for (const [k, val] of entries) {
    if (typeof val !== 'string' || k.length > 64 || val.length > 512)
      throw invalidRequest("'metadata' keys are strings of up to 64 characters, values up to 512.", 'metadata');
    // Newlines and tabs are text; NUL and unpaired surrogates are what the store cannot hold.
    if (`${k}${val}`.includes('\0') || !k.isWellFormed() || !val.isWellFormed())
      throw invalidRequest("'metadata' keys and values must not contain NUL characters or unpaired surrogates.", 'metadata');
    out[k] = val;
  }
  return out;
};

export const createBatch: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  if (key.userId !== undefined)
    throw invalidRequest('A batch runs as an API key of the project: create it with one (not a user token).', null);
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    throw invalidRequest('The request body must be JSON.', null);
  }
  if (!isRecord(body)) throw invalidRequest('The request body must be a JSON object.', null);
  if (typeof body.input_file_id !== 'string' || body.input_file_id === '')
    throw invalidRequest("'input_file_id' is required.", 'input_file_id', 'missing_required_parameter');
  plain(body.input_file_id, 'input_file_id');
  if (!isEndpoint(body.endpoint)) throw invalidRequest(`'endpoint' must be one of ${BATCH_ENDPOINTS.join(', ')}.`, 'endpoint');
  if (body.completion_window !== '24h') throw invalidRequest("'completion_window' must be '24h'.", 'completion_window');
  return json(
    await b.service.createBatch(caller, { inputFileId: body.input_file_id, endpoint: body.endpoint, metadata: metadataOf(body.metadata) }),
    ids,
  );
};

export const getBatch: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  const id = idOf(req, 3, 'batch_id');
  const batch = await b.service.getBatch(caller, id);
  if (!batch) throw notFound('batch', id);
  return json(batch, ids);
};

export const listBatches: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  return json(await b.service.listBatches(caller, pageOf(req, 100, 20)), ids);
};

export const cancelBatch: Handler = async (b, key, req, ids) => {
  const caller = callerOf(key);
  const id = idOf(req, 3, 'batch_id');
  const batch = await b.service.cancelBatch(caller, id);
  if (!batch) throw notFound('batch', id);
  return json(batch, ids);
};

/** Keys of a snapshot by id (built once per snapshot, on the first batch line served on it). */
const byId = new WeakMap<ConfigSnapshot, Map<string, KeySnapshot>>();
const keyById = (snapshot: ConfigSnapshot, id: string): KeySnapshot => {
  let index = byId.get(snapshot);
  if (!index) {
    index = new Map([...snapshot.keys.values()].map((k) => [k.id, k]));
    byId.set(snapshot, index);
  }
  const key = index.get(id);
  if (!key || (key.expiresAt !== null && key.expiresAt <= Date.now()))
    throw invalidApiKey('The API key that created this batch is no longer valid.');
  return key;
};

/**
 * A batch line through this plane's pipeline, as the key that created the batch: the project's
 * routes, fallback, limits, budgets, guardrails, records and the response cache as for a live
 * request. The record's client request id is `<batch id>/<custom_id>`.
 */
export const batchLineRunner =
  (deps: InferenceDeps): ((batchId: string) => RunLine) =>
  (batchId) =>
  async (keyId, endpoint, body, customId) => {
    const ids: RequestIds = { requestId: requestUuid(), clientRequestId: `${batchId}/${customId}`.slice(0, 256) };
    const req = new Request(`http://batch.internal${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const as = (snapshot: ConfigSnapshot) => keyById(snapshot, keyId);
    const res =
      endpoint === '/v1/embeddings'
        ? await handleExtra(deps, 'embeddings', endpoint, req, ids, as)
        : await handleInference(
            deps,
            endpoint === '/v1/chat/completions' ? 'chat' : endpoint === '/v1/responses' ? 'responses' : 'messages',
            req,
            ids,
            as,
          );
    return { status: res.status, requestId: ids.requestId, body: await res.text() };
  };
