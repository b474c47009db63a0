import { ApiError, ManagementClient } from '../api/client.ts';
import { type CheckpointWire, CHECKPOINT_ALGO } from './checkpoint.ts';
import { checkpointSignatureValid, ed25519Jwks, fromBase64, importEd25519, leafHashOf, rootFromPath, sameBytes } from './verifier.ts';

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
 * It talks to the server through the one management client (src/api/client.ts): typed calls whose
 * answers are checked against the operations' response schemas, retried when the server is
 * unreachable or answers 5xx. The hashing and signature checks are those of the console's audit
 * page: one verifier, src/audit/verifier.ts (WebCrypto).
 */

export interface VerifyOptions {
  endpoint: string;
  token: string;
  entry?: string;
  /** Checkpoints fetched per ListAuditCheckpoints call (default 100). */
  pageSize?: number;
  /** Attempts per call when the server is unreachable or answers 5xx (the client's default: 5). */
  attempts?: number;
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

/** Ed25519 public keys by kid, from the JWKS document (other keys — the user-token RSA keys — are skipped). */
const ed25519Keys = async (doc: unknown): Promise<Map<string, CryptoKey>> => {
  const keys = new Map<string, CryptoKey>();
  for (const [kid, x] of ed25519Jwks(doc)) keys.set(kid, await importEd25519(x));
  return keys;
};

/** Whether the checkpoint's signature verifies under `key`; a malformed signature is a bad one. */
const signatureValid = (c: CheckpointWire, key: CryptoKey): Promise<boolean> => checkpointSignatureValid(c, key).catch(() => false);

/** An answer of a server that has no such operation (an older server). */
const isUnknownOperation = (e: unknown): boolean =>
  e instanceof ApiError && e.code === 'not_found' && e.status === 404 && e.message.endsWith(': unknown operation');

const windowName = (c: CheckpointWire): string => `checkpoint seq ${c.seq} (window ${c.rangeStartTs} .. ${c.rangeEndTs})`;

export const verifyAuditLog = async (o: VerifyOptions): Promise<VerifyResult> => {
  const client = new ManagementClient({
    endpoint: o.endpoint,
    token: o.token,
    ...(o.attempts !== undefined ? { attempts: o.attempts } : {}),
  });
  const failures: string[] = [];
  const notes: string[] = [];
  const fail = (m: string) => failures.push(m);

  const keys = await ed25519Keys(await client.getJson('/.well-known/jwks.json'));

  const checkpoints: CheckpointWire[] = [];
  const limit = o.pageSize ?? 100;
  for (let after = '0'; ; ) {
    const page = await client.call('ListAuditCheckpoints', { afterSeq: after, limit, rebuild: true });
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
    if (c.prevRootHash !== (prev ? prev.rootHash : ''))
      fail(`${name}: prevRootHash is not the root of ${prev ? `seq ${prev.seq}` : 'nothing (first checkpoint)'} — the chain is broken`);
    if (prev && c.rangeStartTs !== prev.rangeEndTs)
      fail(`${name}: the window does not start where seq ${prev.seq} ended (${prev.rangeEndTs})`);
    if (Date.parse(c.rangeStartTs) >= Date.parse(c.rangeEndTs)) fail(`${name}: empty or inverted window`);
    const key = keys.get(c.signingKid);
    if (!key) fail(`${name}: signing key '${c.signingKid}' is not published in the JWKS`);
    else if (!(await signatureValid(c, key))) fail(`${name}: bad signature (kid ${c.signingKid})`);
    if (c.contentRootHash === undefined || c.contentLeafCount === undefined) fail(`${name}: the server did not rebuild the window`);
    else if (c.contentLeafCount !== c.leafCount)
      fail(`${name}: the window holds ${c.contentLeafCount} entries now, ${c.leafCount} when sealed (entries deleted or inserted)`);
    else if (c.contentRootHash !== c.rootHash) fail(`${name}: the window's entries changed since sealing (content root differs)`);
    prev = c;
  }

  if (o.entry !== undefined) {
    const id = o.entry;
    const p = await client.call('GetAuditInclusionProof', { auditLogId: id });
    if (!p.found || !p.checkpoint) fail(`entry ${id}: no inclusion proof (${p.reason || 'not found'})`);
    else {
      const proven = p.checkpoint;
      const cp = checkpoints.find((c) => c.seq === proven.seq);
      const name = windowName(proven);
      if (!cp) fail(`entry ${id}: ${name} is not in the checkpoint list`);
      else if (cp.rootHash !== proven.rootHash || cp.leafCount !== proven.leafCount)
        fail(`entry ${id}: the proof names ${name} with another root than the list`);
      else {
        const leaf = fromBase64(p.leafHash);
        const root = await rootFromPath(leaf, Number(p.leafIndex), Number(p.treeSize), p.proof.map(fromBase64));
        if (p.treeSize !== cp.leafCount)
          fail(`entry ${id} in ${name}: the window holds ${p.treeSize} entries now, ${cp.leafCount} when sealed`);
        else if (!root || !sameBytes(root, fromBase64(cp.rootHash)))
          fail(`entry ${id} in ${name}: the audit path does not lead to the sealed root (the entry or its window changed)`);
        try {
          const got = await client.call('GetAuditLog', { id });
          if (!sameBytes(await leafHashOf(got.log), leaf))
            fail(`entry ${id} in ${name}: the entry as GetAuditLog returns it does not hash to the proven leaf`);
        } catch (e) {
          if (isUnknownOperation(e)) notes.push('this server has no GetAuditLog: the leaf hash was taken from the proof');
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
export const AUDIT_VERIFY_USAGE = `usage: gateway audit:verify --endpoint URL [--token T] [--entry ID] (from source: bun run audit:verify …)
  Verifies the audit log of the management API at URL: every checkpoint's signature (keys from
  /.well-known/jwks.json), the chain of checkpoints and each sealed window's entries.
  --endpoint URL   the management API base URL (e.g. http://127.0.0.1:8081)
  --token T        the platform-admin token (default: GATEWAY_ADMIN_TOKEN)
  --entry ID       also prove that this audit entry is included in a checkpoint
  --help           this text
  Exit 0: everything verified; 1: a check failed (the first failure is printed); 2: bad usage.`;

export const main = async (argv: readonly string[]): Promise<number> => {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(AUDIT_VERIFY_USAGE);
    return 0;
  }
  const endpoint = argValue(argv, '--endpoint');
  const token = argValue(argv, '--token') ?? process.env.GATEWAY_ADMIN_TOKEN;
  const entry = argValue(argv, '--entry');
  if (!endpoint || !token) {
    console.error(AUDIT_VERIFY_USAGE);
    return 2;
  }
  try {
    const r = await verifyAuditLog({ endpoint, token, ...(entry ? { entry } : {}) });
    for (const n of r.notes) console.log(`note: ${n}`);
    if (r.ok) {
      console.log(
        `OK: ${r.checkpoints} checkpoint(s): chain, signatures and window contents verified${entry ? `; entry ${entry} included` : ''}`,
      );
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
