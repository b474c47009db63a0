import { and, asc, gt, gte, lt, or, eq } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { type AuditCheckpointRow, auditLogs } from '../store/schema/index.ts';
import { auditEntryView, leafHash } from './entry.ts';
import type { SignedFields } from './verifier.ts';

/** Contract §3.3: the checkpoint algorithm (RFC 6962 tree of SHA-256, Ed25519 signature). */
export const CHECKPOINT_ALGO = 'rfc6962-sha256+ed25519';

const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');

/** A checkpoint on the wire (bytes as base64, int64 as string, timestamps RFC 3339 UTC): its signed fields and these. */
export interface CheckpointWire extends SignedFields {
  signature: string;
  signingKid: string;
  kekVersion: number;
  signedAt: string;
  createdAt: string;
  contentRootHash?: string;
  contentLeafCount?: string;
}

export const checkpointView = (r: AuditCheckpointRow, content?: { root: Uint8Array; count: number }): CheckpointWire => ({
  seq: String(r.seq),
  rangeStartId: r.rangeStartId,
  rangeEndId: r.rangeEndId,
  rangeStartTs: r.rangeStartTs.toISOString(),
  rangeEndTs: r.rangeEndTs.toISOString(),
  leafCount: String(r.leafCount),
  rootHash: b64(r.rootHash),
  prevRootHash: b64(r.prevRootHash),
  algo: r.algo,
  signature: b64(r.signature),
  signingKid: r.signingKid,
  kekVersion: r.kekVersion,
  signedAt: r.signedAt.toISOString(),
  createdAt: r.createdAt.toISOString(),
  ...(content ? { contentRootHash: b64(content.root), contentLeafCount: String(content.count) } : {}),
});

/** The leaves of a window [start, end) as stored now: ids and leaf hashes in (timestamp, id) order. */
export interface WindowLeaves {
  ids: string[];
  hashes: Uint8Array[];
}

const BATCH = 5_000;

type Reader = Pick<Db, 'select'>;

/** Reads a window's entries in (timestamp, id) order, in batches, keeping only ids and leaf hashes. */
export const windowLeaves = async (db: Reader, start: Date, end: Date): Promise<WindowLeaves> => {
  const out: WindowLeaves = { ids: [], hashes: [] };
  let after: { ts: Date; id: string } | undefined;
  for (;;) {
    const rows = await db
      .select()
      .from(auditLogs)
      .where(
        and(
          gte(auditLogs.timestamp, start),
          lt(auditLogs.timestamp, end),
          after ? or(gt(auditLogs.timestamp, after.ts), and(eq(auditLogs.timestamp, after.ts), gt(auditLogs.id, after.id))) : undefined,
        ),
      )
      .orderBy(asc(auditLogs.timestamp), asc(auditLogs.id))
      .limit(BATCH);
    for (const r of rows) {
      out.ids.push(r.id);
      out.hashes.push(leafHash(auditEntryView(r)));
    }
    const last = rows.at(-1);
    if (!last || rows.length < BATCH) return out;
    after = { ts: last.timestamp, id: last.id };
  }
};
