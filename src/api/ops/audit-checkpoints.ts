import { Type as t } from '@sinclair/typebox';
import { Int32, Int64, Nullable, Str, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/**
 * Audit checkpoints (contract §3.3): signed, chained Merkle roots over closed windows of audit
 * entries, inclusion proofs, and the signing key's rotation. See docs/audit.md.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Audit';

/** ListAuditCheckpoints' page: `limit` 0 or unset, and its cap. */
export const CHECKPOINT_PAGE_DEFAULT = 100;
export const CHECKPOINT_PAGE_MAX = 1000;

const Bytes = (description: string) => t.String({ description: `${description} (base64)` });
const Int64Out = (description: string) => t.String({ description: `${description} (int64 as a string)` });

export const CheckpointOut = t.Object(
  {
    seq: Int64Out('checkpoint sequence, from 1 without gaps'),
    rangeStartId: t.String({ description: 'id of the first entry (leaf 0) at sealing' }),
    rangeEndId: t.String({ description: 'id of the last entry at sealing' }),
    rangeStartTs: Timestamp('window start (inclusive): the previous window end, or the first entry for seq 1'),
    rangeEndTs: Timestamp('window end (exclusive)'),
    leafCount: Int64Out('entries in the window at sealing'),
    rootHash: Bytes('RFC 6962 Merkle tree hash of the window entries ordered by (timestamp, id)'),
    prevRootHash: Bytes('rootHash of checkpoint seq-1; empty for the first'),
    algo: t.String({ description: "'rfc6962-sha256+ed25519'" }),
    signature: Bytes(
      'Ed25519 over JCS of {seq, rangeStartId, rangeEndId, rangeStartTs, rangeEndTs, leafCount, rootHash, prevRootHash, algo}',
    ),
    signingKid: t.String({ description: 'kid of the key in GET /.well-known/jwks.json' }),
    kekVersion: t.Integer({ description: 'version of the KEK wrapping the signing key' }),
    signedAt: Timestamp(),
    createdAt: Timestamp(),
    contentRootHash: t.Optional(Bytes('with rebuild: the root recomputed from the window as stored now')),
    contentLeafCount: t.Optional(Int64Out('with rebuild: entries in the window now')),
  },
  { description: 'AuditCheckpoint: a signed, chained Merkle root over a closed window of audit entries' },
);

export const AuditCheckpointOps = {
  ListAuditCheckpoints: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListAuditCheckpoints',
    summary: 'List sealed audit checkpoints (ascending seq)',
    notes: `afterSeq: strictly greater than (0 = from the start). limit: 0 or unset = ${CHECKPOINT_PAGE_DEFAULT}, at most ${CHECKPOINT_PAGE_MAX} (larger values are capped). rebuild true recomputes every listed window from the entries stored now into contentRootHash / contentLeafCount: a difference from rootHash / leafCount means an entry of that window was edited, deleted or inserted after sealing. Windows: rangeStartTs ≤ timestamp < rangeEndTs, contiguous. See docs/audit.md.`,
    permission: 'platform_admin',
    input: t.Object(
      {
        afterSeq: t.Optional(
          Int64({
            minimum: 0,
            maximum: Number.MAX_SAFE_INTEGER,
            description: 'int64 ≥ 0: list checkpoints with seq strictly greater (0 = from the start)',
          }),
        ),
        limit: t.Optional(
          Int32({
            minimum: 0,
            maximum: 2_147_483_647,
            description: `int32; 0 or unset = ${CHECKPOINT_PAGE_DEFAULT}, capped at ${CHECKPOINT_PAGE_MAX}`,
          }),
        ),
        rebuild: t.Optional(t.Boolean({ description: 'recompute each window from current content (more expensive)' })),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ checkpoints: t.Array(CheckpointOut) }),
  }),
  GetAuditInclusionProof: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetAuditInclusionProof',
    summary: "An audit entry's RFC 6962 inclusion proof in its sealed checkpoint",
    notes:
      "found false: reason 'row_missing' (no such entry) or 'unsealed' (its timestamp lies in no sealed window yet, or before the first). found true: leafHash is recomputed from the entry as stored now, leafIndex and proof (audit path, leaf to root) are computed in the tree of the window's entries as stored now, treeSize is their number. The path leads to checkpoint.rootHash and treeSize equals checkpoint.leafCount only if the window is unchanged since sealing.",
    permission: 'platform_admin',
    input: t.Object({ auditLogId: Str(1, 64, { description: 'the audit entry id (UUID)' }) }, { additionalProperties: false }),
    output: t.Object({
      found: t.Boolean(),
      reason: t.String({ description: "'' when found; 'unsealed' or 'row_missing'" }),
      checkpoint: t.Optional(CheckpointOut),
      leafHash: Bytes('SHA-256(0x00 ‖ JCS(entry)); empty when not found'),
      leafIndex: Int64Out('position of the entry among the window entries ordered by (timestamp, id)'),
      proof: t.Array(Bytes('audit path node'), { description: 'RFC 6962 audit path, leaf to root' }),
      treeSize: Int64Out('entries in the sealed window now'),
    }),
  }),
  RotateAuditSigningKey: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RotateAuditSigningKey',
    summary: 'Retire the active audit checkpoint signing key and create a new one',
    notes:
      'Checkpoints sealed from now on are signed with the new key. A retired key stays published in GET /.well-known/jwks.json while a checkpoint signed with it exists.',
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'audit_signing_key' },
    input: t.Object({ reason: Nullable(Str(0, 500), 'why (0-500); kept in the audit trail') }, { additionalProperties: false }),
    output: t.Object({
      kid: t.String({ description: 'the new active kid' }),
      retiredKid: t.String({ description: 'the retired kid; empty if there was none' }),
    }),
  }),
};

export const AuditCheckpointResources = {
  /** The key audit checkpoints are signed with (RotateAuditSigningKey). */
  auditSigningKey: defineResource({ owner: 'global', audit: 'audit_signing_key' }),
};
