import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { KindGuard, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { CompactEncrypt, compactDecrypt, importPKCS8, importSPKI } from 'jose';
import { GatewayError } from '../core/errors.ts';
import {
  type ConfigDocument,
  ConfigDocumentSchema,
  SEALED_PATTERN,
  type Sealed,
  type SealedPull,
  SealedPullSchema,
} from '../api/config-document.ts';

/**
 * Secrets sealed for one data plane. Every secret field of the configuration document (the fields
 * api/config-document.ts declares secret: provider keys, provider options, BYOK keys, …) is replaced by a
 * compact JWE (`dir` + A256GCM) under a fresh per-document key, and that key travels as a JWE
 * (RSA-OAEP-256 key wrap, A256GCM content) to the public key of the data plane's service account.
 * Only the holder of that account's private key can open them; the document is cached on the data
 * plane's disk sealed as it came, and opened in memory only.
 */
export const SEAL_ALG = 'RSA-OAEP-256';

export const sealFor = async (publicKeyPem: string, secrets: Record<string, string>): Promise<string> =>
  new CompactEncrypt(new TextEncoder().encode(JSON.stringify(secrets)))
    .setProtectedHeader({ alg: SEAL_ALG, enc: 'A256GCM', cty: 'secrets+json' })
    .encrypt(await importSPKI(publicKeyPem, SEAL_ALG));

export const unseal = async (privateKeyPem: string, sealed: string): Promise<Record<string, string>> => {
  const { plaintext } = await compactDecrypt(sealed, await importPKCS8(privateKeyPem, SEAL_ALG), {
    keyManagementAlgorithms: [SEAL_ALG],
    contentEncryptionAlgorithms: ['A256GCM'],
  });
  const out: unknown = JSON.parse(new TextDecoder().decode(plaintext));
  if (typeof out !== 'object' || out === null || Array.isArray(out))
    throw new GatewayError({ kind: 'internal', message: 'sealed secrets: not an object' });
  const map: Record<string, string> = {};
  for (const [k, v] of Object.entries(out)) if (typeof v === 'string') map[k] = v;
  return map;
};

// ---- one field: a compact JWE under the document key ------------------------------------------

const HEADER = 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0'; // {"alg":"dir","enc":"A256GCM"}
const AAD = Buffer.from(HEADER, 'ascii');
const SEALED = new RegExp(SEALED_PATTERN);
const isSealed = (s: string): s is Sealed => SEALED.test(s);
const broken = (message: string): GatewayError => new GatewayError({ kind: 'internal', message });

export const sealText = (key: Uint8Array, text: string): Sealed => {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(AAD);
  const ct = Buffer.concat([c.update(text, 'utf8'), c.final()]);
  const out = `${HEADER}..${iv.toString('base64url')}.${ct.toString('base64url')}.${c.getAuthTag().toString('base64url')}`;
  if (!isSealed(out)) throw broken('sealing a secret produced no sealed value');
  return out;
};

export const openText = (key: Uint8Array, sealed: string): string => {
  const [header, wrapped, iv, ct, tag] = sealed.split('.');
  if (!isSealed(sealed) || header !== HEADER || wrapped !== '' || iv === undefined || ct === undefined || tag === undefined)
    throw broken('a sealed secret is malformed');
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  d.setAAD(AAD);
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
};

// ---- the document: its schema walked -----------------------------------------------------------

/** A schema node declared secret (api/config-document.ts: `secret: true`). */
export const isSecretNode = (s: TSchema): boolean => s.secret === true;
const holdsSecret = (s: TSchema): boolean =>
  isSecretNode(s) ||
  (KindGuard.IsObject(s) && Object.values(s.properties).some(holdsSecret)) ||
  (KindGuard.IsArray(s) && holdsSecret(s.items)) ||
  (KindGuard.IsUnion(s) && s.anyOf.some(holdsSecret));
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value` rebuilt along `schema`: properties the schema does not declare are dropped, and the value
 * at every node declared secret is replaced by `leaf(value)` (a secret may sit in a union only as
 * its one secret member, beside null or plain members).
 */
export const mapSecrets = (schema: TSchema, value: unknown, leaf: (v: unknown) => unknown): unknown => {
  if (value === undefined) return undefined;
  if (isSecretNode(schema)) return leaf(value);
  if (KindGuard.IsObject(schema)) {
    if (!isRecord(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, s] of Object.entries(schema.properties)) {
      const v = mapSecrets(s, value[k], leaf);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
  if (KindGuard.IsArray(schema)) return Array.isArray(value) ? value.map((v) => mapSecrets(schema.items, v, leaf)) : value;
  if (KindGuard.IsUnion(schema) && value !== null) {
    const secretive = schema.anyOf.filter(holdsSecret);
    if (secretive.length === 0) return value;
    const [only] = secretive;
    if (secretive.length === 1 && only && isSecretNode(only)) return leaf(value);
    throw broken('the document schema holds a secret inside a union member');
  }
  return value;
};

const PullCheck = TypeCompiler.Compile(SealedPullSchema);
const DocumentCheck = TypeCompiler.Compile(ConfigDocumentSchema);
const DOCUMENT_KEY = 'documentKey';

/** Where a value first departs from its schema (path and rule, never the value). */
const departure = <T extends TSchema>(check: TypeCheck<T>, v: unknown): string => {
  const e = check.Errors(v).First();
  return e ? `${e.path || '/'}: ${e.message}` : 'unknown';
};

/** The document with every secret sealed for the holder of `publicKeyPem` (a fresh document key each time). */
export const sealDocument = async (doc: ConfigDocument, publicKeyPem: string): Promise<SealedPull> => {
  const key = randomBytes(32);
  const document = mapSecrets(ConfigDocumentSchema, doc, (v) => sealText(key, JSON.stringify(v)));
  const out = { document, sealedKey: await sealFor(publicKeyPem, { [DOCUMENT_KEY]: key.toString('base64url') }) };
  if (!PullCheck.Check(out)) throw broken(`the sealed document does not match its schema (${departure(PullCheck, out)})`);
  return out;
};

/**
 * A pulled (or cached) answer checked and opened: `sealed` is the sealed document and its key with
 * nothing else (what may be kept on disk); `doc` the document with its secrets opened, in memory.
 * A document with any secret field not sealed is refused.
 */
export const openPull = async (answer: unknown, privateKeyPem: string): Promise<{ sealed: SealedPull; doc: ConfigDocument }> => {
  const sealed = mapSecrets(SealedPullSchema, answer, (v) => v);
  if (!PullCheck.Check(sealed)) throw broken(`the pulled document is not sealed as expected (${departure(PullCheck, sealed)})`);
  const key = Buffer.from((await unseal(privateKeyPem, sealed.sealedKey))[DOCUMENT_KEY] ?? '', 'base64url');
  if (key.length !== 32) throw broken('the pulled document key is malformed');
  const doc = mapSecrets(ConfigDocumentSchema, sealed.document, (v) => {
    const parsed: unknown = JSON.parse(openText(key, String(v)));
    return parsed;
  });
  if (!DocumentCheck.Check(doc)) throw broken(`the opened document does not match its schema (${departure(DocumentCheck, doc)})`);
  return { sealed, doc };
};
