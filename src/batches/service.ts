import { and, desc, eq, lt, type SQL } from 'drizzle-orm';
import type { BatchCaller, BatchObject, BatchService, CreateBatch, FileObject, ListPage, PageQuery } from '../core/batches.ts';
import { GatewayError } from '../core/errors.ts';
import type { Db } from '../store/db.ts';
import { type GatewayBatchRow, type GatewayFileRow, gatewayBatches, gatewayFiles } from '../store/schema/index.ts';

/**
 * Files and batches in the management plane's store (contract §11), per project. Ids sort by
 * creation time (a hex timestamp then random hex), so lists are newest first by id and `after`
 * pages on it. The lines of a batch are run by ./runner.ts.
 */

const seconds = (d: Date | null): number | null => (d ? Math.floor(d.getTime() / 1000) : null);

/** `prefix` + 12 hex digits of ms since the epoch + 12 random hex digits. */
export const newId = (prefix: string): string => {
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex');
  return `${prefix}${Date.now().toString(16).padStart(12, '0')}${random}`;
};

export const fileObject = (r: Pick<GatewayFileRow, 'id' | 'bytes' | 'createdAt' | 'filename' | 'purpose'>): FileObject => ({
  id: r.id,
  object: 'file',
  bytes: r.bytes,
  created_at: Math.floor(r.createdAt.getTime() / 1000),
  filename: r.filename,
  purpose: r.purpose,
  status: 'processed',
  status_details: null,
  expires_at: null,
});

export const batchObject = (r: GatewayBatchRow): BatchObject => ({
  id: r.id,
  object: 'batch',
  endpoint: r.endpoint,
  errors:
    r.errors && r.errors.length > 0
      ? { object: 'list', data: r.errors.map((e) => ({ code: e.code, message: e.message, param: null, line: e.line })) }
      : null,
  input_file_id: r.inputFileId,
  completion_window: r.completionWindow,
  status: r.status as BatchObject['status'],
  output_file_id: r.outputFileId,
  error_file_id: r.errorFileId,
  created_at: Math.floor(r.createdAt.getTime() / 1000),
  in_progress_at: seconds(r.inProgressAt),
  expires_at: Math.floor(r.expiresAt.getTime() / 1000),
  finalizing_at: seconds(r.finalizingAt),
  completed_at: seconds(r.completedAt),
  failed_at: seconds(r.failedAt),
  expired_at: r.status === 'expired' ? seconds(r.completedAt) : null,
  cancelling_at: seconds(r.cancellingAt),
  cancelled_at: seconds(r.cancelledAt),
  request_counts: { total: r.total, completed: r.completed, failed: r.failed },
  metadata: r.metadata ?? null,
});

const page = <T extends { id: string }>(rows: T[], limit: number): ListPage<T> => {
  const data = rows.slice(0, limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
};

const FILE_COLUMNS = {
  id: gatewayFiles.id,
  bytes: gatewayFiles.bytes,
  createdAt: gatewayFiles.createdAt,
  filename: gatewayFiles.filename,
  purpose: gatewayFiles.purpose,
};

const WINDOW_MS = 24 * 3600_000;

export class DbBatchService implements BatchService {
  constructor(
    private readonly db: Db,
    /** Wakes the runner when a batch was created or cancelled. */
    private readonly wake: () => void = () => undefined,
  ) {}

  async createFile(caller: BatchCaller, purpose: string, filename: string, content: string): Promise<FileObject> {
    const row = { id: newId('file-'), projectUuid: caller.projectUuid, purpose, filename, bytes: Buffer.byteLength(content), content };
    const [out] = await this.db.insert(gatewayFiles).values(row).returning(FILE_COLUMNS);
    if (!out) throw new GatewayError({ kind: 'internal', message: 'The file was not stored.' });
    return fileObject(out);
  }

  async listFiles(caller: BatchCaller, q: PageQuery & { purpose?: string }): Promise<ListPage<FileObject>> {
    const where: SQL[] = [eq(gatewayFiles.projectUuid, caller.projectUuid)];
    if (q.after) where.push(lt(gatewayFiles.id, q.after));
    if (q.purpose) where.push(eq(gatewayFiles.purpose, q.purpose));
    const rows = await this.db
      .select(FILE_COLUMNS)
      .from(gatewayFiles)
      .where(and(...where))
      .orderBy(desc(gatewayFiles.id))
      .limit(q.limit + 1);
    return page(rows.map(fileObject), q.limit);
  }

  async getFile(caller: BatchCaller, id: string): Promise<FileObject | undefined> {
    const [r] = await this.db
      .select(FILE_COLUMNS)
      .from(gatewayFiles)
      .where(and(eq(gatewayFiles.projectUuid, caller.projectUuid), eq(gatewayFiles.id, id)));
    return r ? fileObject(r) : undefined;
  }

  async fileContent(caller: BatchCaller, id: string): Promise<string | undefined> {
    const [r] = await this.db
      .select({ content: gatewayFiles.content })
      .from(gatewayFiles)
      .where(and(eq(gatewayFiles.projectUuid, caller.projectUuid), eq(gatewayFiles.id, id)));
    return r?.content;
  }

  async deleteFile(caller: BatchCaller, id: string): Promise<boolean> {
    const gone = await this.db
      .delete(gatewayFiles)
      .where(and(eq(gatewayFiles.projectUuid, caller.projectUuid), eq(gatewayFiles.id, id)))
      .returning({ id: gatewayFiles.id });
    return gone.length > 0;
  }

  async createBatch(caller: BatchCaller, input: CreateBatch): Promise<BatchObject> {
    const file = await this.getFile(caller, input.inputFileId);
    if (!file)
      throw new GatewayError({
        kind: 'not_found',
        errorCode: 'file_not_found',
        message: `No file found with id '${input.inputFileId}'.`,
        param: 'input_file_id',
      });
    if (file.purpose !== 'batch')
      throw new GatewayError({
        kind: 'invalid_request',
        message: `File '${file.id}' has purpose '${file.purpose}'; a batch's input file needs purpose 'batch'.`,
        param: 'input_file_id',
      });
    const [row] = await this.db
      .insert(gatewayBatches)
      .values({
        id: newId('batch_'),
        projectUuid: caller.projectUuid,
        apiKeyId: caller.keyId,
        endpoint: input.endpoint,
        inputFileId: input.inputFileId,
        completionWindow: '24h',
        status: 'validating',
        metadata: input.metadata,
        expiresAt: new Date(Date.now() + WINDOW_MS),
      })
      .returning();
    if (!row) throw new GatewayError({ kind: 'internal', message: 'The batch was not stored.' });
    this.wake();
    return batchObject(row);
  }

  async getBatch(caller: BatchCaller, id: string): Promise<BatchObject | undefined> {
    const [r] = await this.db
      .select()
      .from(gatewayBatches)
      .where(and(eq(gatewayBatches.projectUuid, caller.projectUuid), eq(gatewayBatches.id, id)));
    return r ? batchObject(r) : undefined;
  }

  async listBatches(caller: BatchCaller, q: PageQuery): Promise<ListPage<BatchObject>> {
    const where: SQL[] = [eq(gatewayBatches.projectUuid, caller.projectUuid)];
    if (q.after) where.push(lt(gatewayBatches.id, q.after));
    const rows = await this.db
      .select()
      .from(gatewayBatches)
      .where(and(...where))
      .orderBy(desc(gatewayBatches.id))
      .limit(q.limit + 1);
    return page(rows.map(batchObject), q.limit);
  }

  async cancelBatch(caller: BatchCaller, id: string): Promise<BatchObject | undefined> {
    const mine = and(eq(gatewayBatches.projectUuid, caller.projectUuid), eq(gatewayBatches.id, id));
    const [r] = await this.db.select({ status: gatewayBatches.status }).from(gatewayBatches).where(mine);
    if (!r) return undefined;
    if (r.status === 'validating' || r.status === 'in_progress') {
      await this.db
        .update(gatewayBatches)
        .set({ status: 'cancelling', cancellingAt: new Date() })
        .where(and(mine, eq(gatewayBatches.status, r.status)));
      this.wake();
    } else if (r.status !== 'cancelling' && r.status !== 'cancelled') {
      throw new GatewayError({ kind: 'conflict', message: `Batch '${id}' is ${r.status} and cannot be cancelled.` });
    }
    return this.getBatch(caller, id);
  }
}
