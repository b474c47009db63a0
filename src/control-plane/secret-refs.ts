import { and, eq } from 'drizzle-orm';
import { connectError } from '../core/errors.ts';
import type { SecretBox } from '../core/secrets.ts';
import { storedSecrets } from '../store/schema/index.ts';
import type { Reader, Tx } from './deps.ts';

/**
 * Secret references (docs/security.md, "Secret references"):
 * - `secret://internal/<uuid>`: a secret the management plane keeps (table `stored_secrets`,
 *   wrapped with GATEWAY_KEK), of the same customer;
 * - `secret://env/<NAME>`: the value of environment variable NAME in the management process.
 * Anything else starting with `secret://` is refused; any other string is a plaintext value.
 */
export const SECRET_SCHEME = 'secret://';
const INTERNAL = /^secret:\/\/internal\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const ENV = /^secret:\/\/env\/([A-Za-z_][A-Za-z0-9_]{0,127})$/;

export const isSecretRef = (v: string): boolean => v.startsWith(SECRET_SCHEME);
export const internalRef = (id: string): string => `${SECRET_SCHEME}internal/${id}`;

/** Stores a plaintext secret for a customer and returns its internal reference. */
export const storeSecret = async (tx: Tx, secrets: SecretBox, customerId: string, purpose: string, plaintext: string): Promise<string> => {
  const [row] = await tx
    .insert(storedSecrets)
    .values({ customerId, purpose, valueWrapped: secrets.wrap(plaintext) })
    .returning({ id: storedSecrets.id });
  if (!row) throw new Error('secret not stored');
  return internalRef(row.id);
};

/** The plaintext a reference names, or `invalid_argument` naming `field` when it names nothing usable. */
export const resolveSecretRef = async (
  db: Reader,
  secrets: SecretBox,
  customerId: string,
  ref: string,
  field: string,
  env: Record<string, string | undefined> = process.env,
): Promise<string> => {
  const internal = INTERNAL.exec(ref);
  if (internal) {
    const [row] = await db
      .select({ v: storedSecrets.valueWrapped })
      .from(storedSecrets)
      .where(and(eq(storedSecrets.id, internal[1] as string), eq(storedSecrets.customerId, customerId)))
      .limit(1);
    if (!row) throw connectError('invalid_argument', `${field}: secret reference names no secret of this customer`, field);
    return secrets.unwrap(row.v);
  }
  const fromEnv = ENV.exec(ref);
  if (fromEnv) {
    const v = env[fromEnv[1] as string];
    if (v === undefined || v === '')
      throw connectError('invalid_argument', `${field}: environment variable ${fromEnv[1]} is not set on the management plane`, field);
    return v;
  }
  throw connectError('invalid_argument', `${field}: not a secret reference (secret://internal/<uuid> or secret://env/<NAME>)`, field);
};

/** Checks that a reference names a usable secret; returns it unchanged. */
export const checkSecretRef = async (db: Reader, secrets: SecretBox, customerId: string, ref: string, field: string): Promise<string> => {
  await resolveSecretRef(db, secrets, customerId, ref, field);
  return ref;
};
