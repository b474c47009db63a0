import type { ManagementClient } from '../../api/client.ts';
import {
  checkpointSignatureValid,
  ed25519Jwks,
  fromBase64,
  importEd25519,
  leafHashOf,
  rootFromPath,
  sameBytes,
  toBase64,
} from '../../audit/verifier.ts';

/**
 * An audit entry's inclusion proof verified in the browser (contract §3.3), with WebCrypto:
 * - leaf hash = SHA-256(0x00 ‖ JCS(entry as GetAuditLog returns it)), equal to the proof's;
 * - the audit path (RFC 6962 / RFC 9162 §2.1.3.2, interior node SHA-256(0x01 ‖ left ‖ right))
 *   leads from it to the sealed checkpoint's rootHash, in a tree of the checkpoint's leafCount;
 * - the checkpoint's Ed25519 signature over JCS of its signed fields verifies with the key named
 *   by signingKid in the admin listener's /.well-known/jwks.json.
 * Nothing is taken on the server's word: the server's answers are the inputs, the hashing is in
 * the browser, by the verifier `audit:verify` uses too (src/audit/verifier.ts).
 */

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Verdict {
  ok: boolean;
  /** Why there is nothing to verify (`unsealed`, `row_missing`), when so. */
  reason?: string;
  checks: Check[];
  checkpointSeq?: string;
}

/** The Ed25519 key `kid` from the JWKS document of this origin's admin listener. */
const publicKey = async (kid: string): Promise<CryptoKey | undefined> => {
  const res = await fetch('/.well-known/jwks.json');
  if (!res.ok) return undefined;
  const x = ed25519Jwks(await res.json()).get(kid);
  return x === undefined ? undefined : importEd25519(x);
};

export const verifyEntry = async (client: ManagementClient, id: string): Promise<Verdict> => {
  const proof = await client.call('GetAuditInclusionProof', { auditLogId: id });
  if (!proof.found || !proof.checkpoint) return { ok: false, reason: proof.reason || 'not found', checks: [] };
  const cp = proof.checkpoint;
  const checks: Check[] = [];
  const entry = await client.callJson('GetAuditLog', { id });
  const leaf = await leafHashOf(entry.log);
  checks.push({
    name: 'leaf hash',
    ok: sameBytes(leaf, fromBase64(proof.leafHash)),
    detail: `SHA-256(0x00 ‖ JCS(entry)) = ${toBase64(leaf)}`,
  });
  const root = await rootFromPath(leaf, Number(proof.leafIndex), Number(proof.treeSize), proof.proof.map(fromBase64));
  checks.push({
    name: 'audit path',
    ok: root !== undefined && sameBytes(root, fromBase64(cp.rootHash)),
    detail: `leaf ${proof.leafIndex} of ${proof.treeSize}, ${proof.proof.length} nodes → ${root ? toBase64(root) : 'does not fit the tree'}; checkpoint root ${cp.rootHash}`,
  });
  checks.push({
    name: 'window unchanged',
    ok: proof.treeSize === cp.leafCount,
    detail: `${proof.treeSize} entries now, ${cp.leafCount} when sealed`,
  });
  let signatureOk = false;
  let detail = `Ed25519, key ${cp.signingKid}`;
  try {
    const key = await publicKey(cp.signingKid);
    if (!key) detail += ': not published';
    else signatureOk = await checkpointSignatureValid(cp, key);
  } catch (e) {
    // No such key type in this browser, or a malformed key or signature: the check fails, named.
    detail += `: ${e instanceof Error ? e.message : String(e)}`;
  }
  checks.push({ name: 'checkpoint signature', ok: signatureOk, detail });
  return { ok: checks.every((c) => c.ok), checks, checkpointSeq: cp.seq };
};
