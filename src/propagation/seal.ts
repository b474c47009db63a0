import { CompactEncrypt, compactDecrypt, importPKCS8, importSPKI } from 'jose';

/**
 * Provider secrets sealed for one data plane: a JWE (RSA-OAEP-256 key wrap, A256GCM content) to
 * the public key of the data plane's service account. Only the holder of that account's private
 * key can open it; the document may be cached on the data plane's disk sealed as it came.
 */
export const SEAL_ALG = 'RSA-OAEP-256';

export const sealFor = async (publicKeyPem: string, secrets: Record<string, string>): Promise<string> =>
  new CompactEncrypt(new TextEncoder().encode(JSON.stringify(secrets)))
    .setProtectedHeader({ alg: SEAL_ALG, enc: 'A256GCM', cty: 'secrets+json' })
    .encrypt(await importSPKI(publicKeyPem, SEAL_ALG));

export const unseal = async (privateKeyPem: string, sealed: string): Promise<Record<string, string>> => {
  const { plaintext } = await compactDecrypt(sealed, await importPKCS8(privateKeyPem, SEAL_ALG), { keyManagementAlgorithms: [SEAL_ALG], contentEncryptionAlgorithms: ['A256GCM'] });
  const out: unknown = JSON.parse(new TextDecoder().decode(plaintext));
  if (typeof out !== 'object' || out === null || Array.isArray(out)) throw new Error('sealed secrets: not an object');
  const map: Record<string, string> = {};
  for (const [k, v] of Object.entries(out)) if (typeof v === 'string') map[k] = v;
  return map;
};
