import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { type CheckpointWire, CHECKPOINT_ALGO, checkpointMessage } from './checkpoint.ts';
import { type AuditLogEntry, leafHash } from './entry.ts';
import { rootFromPath, sameBytes } from './merkle.ts';

/**
 * `bun run audit:verify --endpoint URL --token T [--entry ID]` (contract §3.3), and the same as a
 * library (`verifyAuditLog`). With nothing but the management API's answers and the published
 * keys it checks:
 * - the chain: seq 1, 2, … without gaps, each prevRootHash the previous rootHash (empty first),
 *   each window starting where the previous one ended;
 * - every signature (Ed25519 over JCS of the signed fields, key by kid from the JWKS);
 * - every window's content: rebuilt from the entries stored now, root and count must match;
 * - with an entry id: the entry (GetAuditLog) hashes to the proof's leaf, and its audit path
 *   leads to the root of its checkpoint, whose window holds as many entries as when sealed.
 * Every failure is named (checkpoint seq and window, or the entry); the first is the headline.
 */

export interface VerifyOptions {
  endpoint: string;
  token: string;
  entry?: string;
  /** Checkpoints fetched per ListAuditCheckpoints call (default 100). */
  pageSize?: number;
}

export interface VerifyResult {
  ok: boolean;
  /** Checkpoints checked. */
  checkpoints: number;
  /** Every failure found, the first one first. */
  failures: string[];
  /** Remarks that are not failures. */
  notes: string[];
}

interface JwkIn {
  kty?: string;
  crv?: string;
  kid?: string;
  x?: string;
}

interface ProofWire {
  found: boolean;
  reason: string;
  checkpoint?: CheckpointWire;
  leafHash: string;
  leafIndex: string;
  proof: string[];
  treeSize: string;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${typeof body.code === 'string' ? `${body.code}: ${String(body.message ?? '')}` : ''}`.trim());
  }
}

const bytes = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, 'base64'));
const windowName = (c: CheckpointWire): string => `checkpoint seq ${c.seq} (window ${c.rangeStartTs} .. ${c.rangeEndTs})`;

export const verifyAuditLog = async (o: VerifyOptions): Promise<VerifyResult> => {
  const base = o.endpoint.replace(/\/+$/, '');
  const call = async <T>(operation: string, body: unknown): Promise<T> => {
    const res = await fetch(`${base}/admin.v1.AdminService/${operation}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token}` },
      body: JSON.stringify(body),
    });
    const parsed = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status !== 200) throw new ApiError(res.status, parsed, operation);
    return parsed as T;
  };
  const failures: string[] = [];
  const notes: string[] = [];
  const fail = (m: string) => failures.push(m);

  const jwksRes = await fetch(`${base}/.well-known/jwks.json`);
  if (jwksRes.status !== 200) throw new Error(`GET /.well-known/jwks.json: HTTP ${jwksRes.status}`);
  const jwks = ((await jwksRes.json()) as { keys?: JwkIn[] }).keys ?? [];
  const keyOf = (kid: string) => {
    const jwk = jwks.find((k) => k.kid === kid && k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string');
    return jwk ? createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string }, format: 'jwk' }) : undefined;
  };

  const checkpoints: CheckpointWire[] = [];
  const limit = o.pageSize ?? 100;
  for (let after = '0'; ; ) {
    const page = await call<{ checkpoints: CheckpointWire[] }>('ListAuditCheckpoints', { afterSeq: after, limit, rebuild: true });
    checkpoints.push(...page.checkpoints);
    const last = page.checkpoints.at(-1);
    if (!last || page.checkpoints.length < limit) break;
    after = last.seq;
  }

  let prev: CheckpointWire | undefined;
  for (const c of checkpoints) {
    const name = windowName(c);
    const expected = prev ? String(Number(prev.seq) + 1) : '1';
    if (c.seq !== expected) fail(`${name}: expected seq ${expected} (a checkpoint is missing)`);
    if (c.algo !== CHECKPOINT_ALGO) fail(`${name}: unknown algo '${c.algo}'`);
    if (c.prevRootHash !== (prev ? prev.rootHash : '')) fail(`${name}: prevRootHash is not the root of ${prev ? `seq ${prev.seq}` : 'nothing (first checkpoint)'} — the chain is broken`);
    if (prev && c.rangeStartTs !== prev.rangeEndTs) fail(`${name}: the window does not start where seq ${prev.seq} ended (${prev.rangeEndTs})`);
    if (Date.parse(c.rangeStartTs) >= Date.parse(c.rangeEndTs)) fail(`${name}: empty or inverted window`);
    const key = keyOf(c.signingKid);
    if (!key) fail(`${name}: signing key '${c.signingKid}' is not published in the JWKS`);
    else if (!verifySignature(null, checkpointMessage(c), key, bytes(c.signature))) fail(`${name}: bad signature (kid ${c.signingKid})`);
    if (c.contentRootHash === undefined || c.contentLeafCount === undefined) fail(`${name}: the server did not rebuild the window`);
    else if (c.contentLeafCount !== c.leafCount) fail(`${name}: the window holds ${c.contentLeafCount} entries now, ${c.leafCount} when sealed (entries deleted or inserted)`);
    else if (c.contentRootHash !== c.rootHash) fail(`${name}: the window's entries changed since sealing (content root differs)`);
    prev = c;
  }

  if (o.entry !== undefined) {
    const id = o.entry;
    const p = await call<ProofWire>('GetAuditInclusionProof', { auditLogId: id });
    if (!p.found || !p.checkpoint) fail(`entry ${id}: no inclusion proof (${p.reason || 'not found'})`);
    else {
      const cp = checkpoints.find((c) => c.seq === p.checkpoint?.seq);
      const name = windowName(p.checkpoint);
      if (!cp) fail(`entry ${id}: ${name} is not in the checkpoint list`);
      else if (cp.rootHash !== p.checkpoint.rootHash || cp.leafCount !== p.checkpoint.leafCount) fail(`entry ${id}: the proof names ${name} with another root than the list`);
      else {
        const leaf = bytes(p.leafHash);
        const root = rootFromPath(leaf, Number(p.leafIndex), Number(p.treeSize), p.proof.map(bytes));
        if (p.treeSize !== cp.leafCount) fail(`entry ${id} in ${name}: the window holds ${p.treeSize} entries now, ${cp.leafCount} when sealed`);
        else if (!root || !sameBytes(root, bytes(cp.rootHash))) fail(`entry ${id} in ${name}: the audit path does not lead to the sealed root (the entry or its window changed)`);
        try {
          const got = await call<{ log: AuditLogEntry }>('GetAuditLog', { id });
          if (!sameBytes(leafHash(got.log), leaf)) fail(`entry ${id} in ${name}: the entry as GetAuditLog returns it does not hash to the proven leaf`);
        } catch (e) {
          if (e instanceof ApiError && e.status === 404 && String(e.body.message ?? '').startsWith('unknown operation')) notes.push('this server has no GetAuditLog: the leaf hash was taken from the proof');
          else throw e;
        }
      }
    }
  }
  return { ok: failures.length === 0, checkpoints: checkpoints.length, failures, notes };
};

const argValue = (argv: readonly string[], name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};

/** The command line: prints the verdict; exit code 0 only when everything verified. */
export const main = async (argv: readonly string[]): Promise<number> => {
  const endpoint = argValue(argv, '--endpoint');
  const token = argValue(argv, '--token') ?? process.env.GATEWAY_ADMIN_TOKEN;
  const entry = argValue(argv, '--entry');
  if (!endpoint || !token) {
    console.error('usage: bun run audit:verify --endpoint URL --token T [--entry ID]');
    return 2;
  }
  try {
    const r = await verifyAuditLog({ endpoint, token, ...(entry ? { entry } : {}) });
    for (const n of r.notes) console.log(`note: ${n}`);
    if (r.ok) {
      console.log(`OK: ${r.checkpoints} checkpoint(s): chain, signatures and window contents verified${entry ? `; entry ${entry} included` : ''}`);
      return 0;
    }
    console.error(`FAIL: ${r.failures[0]}`);
    for (const f of r.failures.slice(1)) console.error(`  also: ${f}`);
    return 1;
  } catch (e) {
    console.error(`FAIL: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
};

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
