import { int64Value } from '../../api/kit.ts';
import { AuditCheckpointOps } from '../../api/ops/audit-checkpoints.ts';
import { rotateAuditSigningKey } from '../../audit/keys.ts';
import { inclusionProof, listCheckpoints } from '../../audit/proofs.ts';
import { op, type OpDef } from '../connect.ts';
import { mutation } from '../mutation.ts';
import type { ControlDeps } from '../deps.ts';

const { ListAuditCheckpoints, GetAuditInclusionProof, RotateAuditSigningKey } = AuditCheckpointOps;

const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');

export const auditCheckpointOps = (deps: ControlDeps): OpDef[] => [
  op(ListAuditCheckpoints, {
    handler: async (input) => ({
      checkpoints: await listCheckpoints(deps.db, {
        afterSeq: input.afterSeq === undefined ? 0 : int64Value(input.afterSeq),
        limit: input.limit ?? 0,
        rebuild: input.rebuild ?? false,
      }),
    }),
  }),
  op(GetAuditInclusionProof, {
    handler: async (input) => {
      const p = await inclusionProof(deps.db, input.auditLogId);
      if (!p.found) return { found: false, reason: p.reason, leafHash: '', leafIndex: '0', proof: [], treeSize: '0' };
      return {
        found: true,
        reason: '',
        checkpoint: p.checkpoint,
        leafHash: b64(p.leafHash),
        leafIndex: String(p.leafIndex),
        proof: p.proof.map(b64),
        treeSize: String(p.treeSize),
      };
    },
  }),
  mutation(deps, RotateAuditSigningKey, {
    resourceId: (_i, o) => o?.kid,
    handler: async (_input, { tx }) => {
      const r = await rotateAuditSigningKey(tx, deps.secrets);
      return { kid: r.kid, retiredKid: r.retiredKid ?? '' };
    },
  }),
];
