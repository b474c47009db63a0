import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config/env.ts';
import { jcs } from '../../core/jcs.ts';
import { sha256Hex } from '../../core/ids.ts';
import type { AccountTelemetry } from './exports.ts';

/** What a data plane needs from the `serviceAccount` of CreateServiceAccount. */
export interface ServiceAccountFile {
  customerId: string;
  workspaceId: string;
  clientEmail: string;
  privateKey: string;
  privateKeyId: string;
  apiUri: string;
  audience: string;
  issuer: string;
  /**
   * `dataExports.telemetry` as the account was created: applied at start, before the first pull
   * (the pulled document's then wins). Its `localVars` are secret references the data plane cannot
   * open: they come opened with the document, so none is kept here.
   */
  telemetry: AccountTelemetry | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): Record<string, string> =>
  isObject(v) ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};

/** `dataExports.telemetry` of the file, when it has one. */
const telemetryOf = (sa: Record<string, unknown>): AccountTelemetry | undefined => {
  const t = isObject(sa.dataExports) ? sa.dataExports.telemetry : undefined;
  if (!isObject(t)) return undefined;
  const text = (k: string): string => (typeof t[k] === 'string' ? t[k] : '');
  return {
    endpoint: text('endpoint'),
    headers: strings(t.headers),
    insecure: t.insecure === true,
    protocol: text('protocol'),
    timeout: text('timeout'),
    localVars: {},
  };
};

const str = (o: Record<string, unknown>, k: string, file: string): string => {
  const v = o[k];
  if (typeof v !== 'string' || v === '') throw new ConfigError('--service-account', `${file}: '${k}' is missing`);
  return v;
};

/**
 * Reads the file: either the `serviceAccount` object itself or the whole CreateServiceAccount
 * response (`{serviceAccount, checksum, checksumAlgorithm}`), whose checksum is then verified.
 */
export const readServiceAccountFile = (file: string): ServiceAccountFile => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(
      '--service-account',
      `${file}: not a readable JSON file (${e instanceof Error ? e.message.split('\n')[0] : 'error'})`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null) throw new ConfigError('--service-account', `${file}: not a JSON object`);
  let sa = parsed as Record<string, unknown>;
  if (typeof sa.serviceAccount === 'object' && sa.serviceAccount !== null) {
    const wrapper = sa;
    sa = wrapper.serviceAccount as Record<string, unknown>;
    if (typeof wrapper.checksum === 'string' && wrapper.checksumAlgorithm === 'sha256' && sha256Hex(jcs(sa)) !== wrapper.checksum) {
      throw new ConfigError('--service-account', `${file}: checksum mismatch (the file was altered or truncated)`);
    }
  }
  const auth = (typeof sa.authServer === 'object' && sa.authServer !== null ? sa.authServer : {}) as Record<string, unknown>;
  return {
    customerId: str(sa, 'customerId', file),
    workspaceId: str(sa, 'workspaceId', file),
    clientEmail: str(sa, 'clientEmail', file),
    privateKey: str(sa, 'privateKey', file),
    privateKeyId: str(sa, 'privateKeyId', file),
    apiUri: str(sa, 'apiUri', file).replace(/\/+$/, ''),
    audience: str(auth, 'audience', file),
    issuer: str(auth, 'issuer', file),
    telemetry: telemetryOf(sa),
  };
};
