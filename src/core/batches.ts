/**
 * Files and batches (contract §11) as both sides see them: the objects in OpenAI's shapes and the
 * service the data plane's `/v1/files` and `/v1/batches` handlers call. The embedded data plane
 * gets the management plane's store-backed service (src/batches/); a separate data plane has none
 * and refuses with 501 (docs/client-compatibility.md, "Files and batches"). Framework-free.
 */

/** Who is calling: the project's row id and the calling key's id (its batches run as that key). */
export interface BatchCaller {
  projectUuid: string;
  keyId: string;
}

export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  status_details: null;
  expires_at: null;
}

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

export interface BatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: BatchError[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface PageQuery {
  after?: string;
  limit: number;
}

/** The endpoints a batch may name (contract §11). */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

export interface CreateBatch {
  inputFileId: string;
  endpoint: BatchEndpoint;
  metadata: Record<string, string> | null;
}

/** Store-backed files and batches; every call is scoped to the caller's project. */
export interface BatchService {
  createFile(caller: BatchCaller, purpose: string, filename: string, content: string): Promise<FileObject>;
  listFiles(caller: BatchCaller, q: PageQuery & { purpose?: string }): Promise<ListPage<FileObject>>;
  getFile(caller: BatchCaller, id: string): Promise<FileObject | undefined>;
  fileContent(caller: BatchCaller, id: string): Promise<string | undefined>;
  deleteFile(caller: BatchCaller, id: string): Promise<boolean>;
  createBatch(caller: BatchCaller, input: CreateBatch): Promise<BatchObject>;
  getBatch(caller: BatchCaller, id: string): Promise<BatchObject | undefined>;
  listBatches(caller: BatchCaller, q: PageQuery): Promise<ListPage<BatchObject>>;
  cancelBatch(caller: BatchCaller, id: string): Promise<BatchObject | undefined>;
}

/** Runs one batch line through the project's routes as the key `keyId` would (the embedded data plane's pipeline). */
export type RunLine = (
  keyId: string,
  endpoint: BatchEndpoint,
  body: unknown,
  customId: string,
) => Promise<{ status: number; requestId: string; body: string }>;
