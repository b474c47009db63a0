import { describe, expect, test } from 'bun:test';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { KindGuard, type TSchema } from '@sinclair/typebox';
import { compactDecrypt } from 'jose';
import {
  type ConfigDocument,
  ConfigDocumentSchema,
  SEALED_PATTERN,
  type SealedConfigDocument,
  SealedConfigDocumentSchema,
} from '../src/api/config-document.ts';
import { isSecretNode, openPull, sealDocument, sealText } from '../src/propagation/seal.ts';

/**
 * Issue 22, defect 1: the configuration document cannot carry a plaintext secret to a data plane.
 * The schema is walked — every field, not one — so a field added later with a secret-like name
 * fails here until it is declared secret (or listed below as not secret, with the reason); a
 * document generated from the schema, every field filled, is sealed and no secret's plaintext is
 * left; and a document with a secret not sealed is refused by the data plane.
 */

/** Names that suggest a credential. */
const SECRET_LIKE = /secret|key|token|passw|credential|private|auth|cookie|session|signature|header|option/i;
/** Secret-like names that are not secrets, and why. Every entry must exist (no stale exemptions). */
const NOT_SECRET: Record<string, string> = {
  'apiKeys[].keyHash': 'SHA-256 of the API key: what a presented key is looked up by; the key cannot be derived from it',
  'budgets[].apiKeyId': 'a row id',
  'userTokenKeys[].kid': 'a key id',
  'userTokenKeys[].publicKeyPem': 'a public key',
  revokedTokenIds: 'ids (jti) of revoked tokens, not the tokens',
  'guardrails[].maxTokens': 'a token count',
  'catalog[].maxOutputTokens': 'a token count',
  'connections[].allowPrivate': 'a flag (private addresses allowed)',
  'mcpServers[].allowPrivate': 'a flag (private addresses allowed)',
  'guardrails[].allowPrivate': 'a flag (private addresses allowed)',
  'mcpServers[].authType': "how the credential is sent ('none', 'bearer', 'header'), not the credential",
  'mcpServers[].authHeader': 'the name of the header that carries the credential, not its value',
  'a2aAgents[].allowPrivate': 'a flag (private addresses allowed)',
  'a2aAgents[].authType': "how the agent's credential is sent, not the credential",
  'a2aAgents[].authHeader': 'the name of the header that carries the credential, not its value',
};
const SEALED = new RegExp(SEALED_PATTERN);

interface Field {
  path: string;
  name: string;
  schema: TSchema;
}
/** Every property of the schema, with its path (`[]` for array items). */
const fields = (s: TSchema, path = '', name = ''): Field[] => {
  const here = path === '' ? [] : [{ path, name, schema: s }];
  if (KindGuard.IsObject(s))
    return [...here, ...Object.entries(s.properties).flatMap(([k, p]) => fields(p, path === '' ? k : `${path}.${k}`, k))];
  if (KindGuard.IsArray(s) && KindGuard.IsObject(s.items))
    return [...here, ...fields(s.items, `${path}[]`, name).filter((f) => f.path !== `${path}[]`)];
  return here;
};
const declaredSecret = (s: TSchema): boolean => isSecretNode(s) || (KindGuard.IsUnion(s) && s.anyOf.some(isSecretNode));
const containers = (s: TSchema): boolean => KindGuard.IsObject(s) || (KindGuard.IsArray(s) && KindGuard.IsObject(s.items));

describe('the document schema: every secret-like field is sealed', () => {
  const plain = fields(ConfigDocumentSchema);
  const sealed = new Map(fields(SealedConfigDocumentSchema).map((f) => [f.path, f.schema]));

  test('every secret-like field is declared secret, or exempted with a reason', () => {
    const undeclared = plain
      .filter((f) => !containers(f.schema) && SECRET_LIKE.test(f.name) && !declaredSecret(f.schema) && !(f.path in NOT_SECRET))
      .map((f) => f.path);
    expect(undeclared).toEqual([]);
    const paths = new Set(plain.map((f) => f.path));
    expect(Object.keys(NOT_SECRET).filter((p) => !paths.has(p))).toEqual([]);
    // The fields known secret today are declared so.
    const declared = plain.filter((f) => declaredSecret(f.schema)).map((f) => f.path);
    expect(declared).toEqual(
      expect.arrayContaining([
        'connections[].apiKey',
        'connections[].options',
        'byokKeys[].secret',
        'mcpServers[].authValue',
        'dataExports.telemetry.headers',
        'dataExports.telemetry.localVars',
      ]),
    );
  });

  test('in the sealed form every secret field is a sealed value, and only those differ', () => {
    expect([...sealed.keys()]).toEqual(plain.map((f) => f.path));
    for (const f of plain) {
      const s = sealed.get(f.path) as TSchema;
      const members = KindGuard.IsUnion(s) ? s.anyOf : [s];
      if (declaredSecret(f.schema)) {
        const secretMembers = members.filter(isSecretNode);
        expect({ path: f.path, members: secretMembers.length }).toEqual({ path: f.path, members: 1 });
        for (const m of secretMembers) expect({ path: f.path, pattern: m.pattern }).toEqual({ path: f.path, pattern: SEALED_PATTERN });
        expect(members.every((m) => isSecretNode(m) || KindGuard.IsNull(m))).toBe(true);
      } else if (!containers(f.schema))
        expect({ path: f.path, schema: JSON.stringify(s) }).toEqual({ path: f.path, schema: JSON.stringify(f.schema) });
    }
  });

  test('a plaintext string is not assignable to a sealed field (checked by the type checker)', () => {
    const plainKey: ConfigDocument['byokKeys'][number] = { id: 'b', projectUuid: 'p', provider: 'openai', userId: '', secret: 'sk-plain' };
    // @ts-expect-error a plaintext secret is not a Sealed value
    const leak: SealedConfigDocument['byokKeys'][number] = plainKey;
    // @ts-expect-error nor is a plaintext provider key
    const conn: SealedConfigDocument['connections'][number]['apiKey'] = 'sk-plain';
    expect([String(leak.secret), String(conn)]).toEqual(['sk-plain', 'sk-plain']);
  });
});

/** A value for every node of the schema: unique strings, two items per array, optional fields present. */
const sample = (s: TSchema, path: string, secrets: string[], underSecret = false): unknown => {
  const secret = underSecret || isSecretNode(s);
  const text = (suffix = '') => {
    const v = `v${randomBytes(6).toString('hex')}-${path}${suffix}`;
    if (secret) secrets.push(v);
    return v;
  };
  if (KindGuard.IsObject(s))
    return Object.fromEntries(Object.entries(s.properties).map(([k, p]) => [k, sample(p, `${path}.${k}`, secrets, secret)]));
  if (KindGuard.IsArray(s)) return [0, 1].map((i) => sample(s.items, `${path}[${i}]`, secrets, secret));
  if (KindGuard.IsUnion(s)) return sample(s.anyOf.find((m) => !KindGuard.IsNull(m)) ?? s.anyOf[0] ?? s, path, secrets, secret);
  if (KindGuard.IsRecord(s))
    return { headers: { authorization: text('/authorization') }, secretAccessKey: text('/key'), region: text('/region') };
  if (KindGuard.IsString(s)) return text();
  if (KindGuard.IsNumber(s)) return 7;
  if (KindGuard.IsBoolean(s)) return true;
  if (KindGuard.IsNull(s)) return null;
  throw new Error(`no sample for ${path}`);
};

const keys = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });

describe('sealing a document filled from its schema', () => {
  test('no secret is left in plaintext; everything else is; the data plane opens it back whole', async () => {
    const secrets: string[] = [];
    const filled = sample(ConfigDocumentSchema, 'doc', secrets);
    const doc = { ...(filled as ConfigDocument), revision: 12 };
    expect(secrets.length).toBeGreaterThanOrEqual(8);
    const { publicKey, privateKey } = keys();
    const pull = await sealDocument(doc, publicKey);
    const text = JSON.stringify(pull);
    expect(secrets.filter((v) => text.includes(v))).toEqual([]);
    const plainValues = JSON.stringify(doc).match(/v[0-9a-f]{12}-[^"]+/g) ?? [];
    expect(plainValues.filter((v) => !secrets.includes(v) && !text.includes(v))).toEqual([]);
    for (const k of pull.document.byokKeys) expect(k.secret).toMatch(SEALED);
    expect(pull.document.mcpServers?.length).toBe(2);
    for (const m of pull.document.mcpServers ?? []) expect(m.authValue).toMatch(SEALED);
    // A data plane's export headers and local variables (issue 25): sealed, the rest of its settings in the clear.
    expect(pull.document.dataExports?.telemetry.headers).toMatch(SEALED);
    expect(pull.document.dataExports?.telemetry.localVars).toMatch(SEALED);
    expect(pull.document.dataExports?.telemetry.endpoint).toBe(doc.dataExports?.telemetry.endpoint);
    const opened = await openPull(JSON.parse(text), privateKey);
    expect(opened.doc).toEqual(doc);
    // Each document has its own key: sealing again gives other ciphertexts.
    const again = await sealDocument(doc, publicKey);
    expect(again.document.byokKeys[0]?.secret).not.toBe(pull.document.byokKeys[0]?.secret);
  });

  test('a pulled document with a secret not sealed is refused, and the refusal does not echo it', async () => {
    const secrets: string[] = [];
    const doc = sample(ConfigDocumentSchema, 'doc', secrets) as ConfigDocument;
    const { publicKey, privateKey } = keys();
    const pull = JSON.parse(JSON.stringify(await sealDocument(doc, publicKey))) as {
      document: { byokKeys: { secret: string }[]; connections: { apiKey: string }[] };
    };
    for (const tamper of [
      (p: typeof pull) => ((p.document.byokKeys[0] as { secret: string }).secret = 'sk-plaintext-byok'),
      (p: typeof pull) => ((p.document.connections[1] as { apiKey: string }).apiKey = 'sk-plaintext-byok'),
    ]) {
      const bad = structuredClone(pull);
      tamper(bad);
      const err = await openPull(bad, privateKey).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(String((err as Error).message)).toContain('not sealed');
      expect(String((err as Error).message)).not.toContain('sk-plaintext-byok');
    }
    // Properties the schema does not declare are dropped: what is kept on disk is the sealed form only.
    const extra = { ...pull, unchanged: false, leaked: 'sk-plaintext-byok', document: { ...pull.document, stray: 'sk-plaintext-byok' } };
    const { sealed } = await openPull(extra, privateKey);
    expect(JSON.stringify(sealed)).not.toContain('sk-plaintext-byok');
  });

  test('a sealed field is a standard compact JWE (dir, A256GCM) under the document key', async () => {
    const key = randomBytes(32);
    const v = sealText(key, JSON.stringify('sk-interop'));
    expect(v).toMatch(SEALED);
    const { plaintext, protectedHeader } = await compactDecrypt(v, key);
    expect(protectedHeader).toEqual({ alg: 'dir', enc: 'A256GCM' });
    expect(JSON.parse(new TextDecoder().decode(plaintext))).toBe('sk-interop');
    await expect(compactDecrypt(v, randomBytes(32))).rejects.toThrow();
  });
});
