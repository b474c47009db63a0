import { and, asc, desc, eq, gt, lte } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { auditCheckpoints, auditLogs } from '../store/schema/index.ts';
import { type CheckpointWire, checkpointView, windowLeaves } from './checkpoint.ts';
import { auditPath, merkleRoot } from './merkle.ts';
// ListAuditCheckpoints' default page and hard cap (a rebuild reads every entry of each window), declared with its spec.
import { CHECKPOINT_PAGE_DEFAULT, CHECKPOINT_PAGE_MAX } from '../api/ops/audit-checkpoints.ts';

type Reader = Pick<Db, 'select'>;

/** Checkpoints with seq > afterSeq, ascending; `rebuild` recomputes each window from current content. */
export const listCheckpoints = async (db: Reader, o: { afterSeq: number; limit: number; rebuild: boolean }): Promise<CheckpointWire[]> => {
  const limit = o.limit <= 0 ? CHECKPOINT_PAGE_DEFAULT : Math.min(o.limit, CHECKPOINT_PAGE_MAX);
  const rows = await db
    .select()
    .from(auditCheckpoints)
    .where(gt(auditCheckpoints.seq, o.afterSeq))
    .orderBy(asc(auditCheckpoints.seq))
    .limit(limit);
  const out: CheckpointWire[] = [];
  for (const r of rows) {
    if (!o.rebuild) {
      out.push(checkpointView(r));
      continue;
    }
    const leaves = await windowLeaves(db, r.rangeStartTs, r.rangeEndTs);
    out.push(checkpointView(r, { root: merkleRoot(leaves.hashes), count: leaves.ids.length }));
  }
  return out;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type InclusionProof =
  | { found: false; reason: 'unsealed' | 'row_missing' }
  | { found: true; reason: ''; checkpoint: CheckpointWire; leafHash: Uint8Array; leafIndex: number; proof: Uint8Array[]; treeSize: number };

/**
 * The inclusion proof of an entry, computed from the current content of the sealed window that
 * holds its timestamp: leaf hash, index and audit path in the tree of the rows in the window now
 * (`treeSize`). Against the checkpoint's `rootHash` and `leafCount` it proves the entry unchanged
 * — or shows that the entry or its window was edited after sealing.
 */
export const inclusionProof = async (db: Reader, auditLogId: string): Promise<InclusionProof> => {
  if (!UUID.test(auditLogId)) return { found: false, reason: 'row_missing' };
  const id = auditLogId.toLowerCase();
  const [row] = await db.select({ ts: auditLogs.timestamp }).from(auditLogs).where(eq(auditLogs.id, id)).limit(1);
  if (!row) return { found: false, reason: 'row_missing' };
  const [cp] = await db
    .select()
    .from(auditCheckpoints)
    .where(and(lte(auditCheckpoints.rangeStartTs, row.ts), gt(auditCheckpoints.rangeEndTs, row.ts)))
    .orderBy(desc(auditCheckpoints.seq))
    .limit(1);
  if (!cp) return { found: false, reason: 'unsealed' };
  const leaves = await windowLeaves(db, cp.rangeStartTs, cp.rangeEndTs);
  const index = leaves.ids.indexOf(id);
  if (index < 0) return { found: false, reason: 'row_missing' };
  return {
    found: true,
    reason: '',
    checkpoint: checkpointView(cp),
    leafHash: leaves.hashes[index] as Uint8Array,
    leafIndex: index,
    proof: auditPath(leaves.hashes, index),
    treeSize: leaves.ids.length,
  };
};
