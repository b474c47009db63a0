import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/settings.ts';

/**
 * The gateway deployment configuration file (first seed, "Gateway deployment configuration file";
 * contract §9): every key optional, dotted keys written as nested objects, an unknown key or a
 * wrong type refused with one line naming the key. And the identity file (`--identity`).
 */

/** The seed's keys and their types, in the seed's order. */
export const CONFIG_KEYS = {
  projectId: 'string',
  serveDomain: 'string',
  customer: 'string',
  environment: 'string',
  serveUrl: 'string',
  securityPolicy: 'string',
  'certificateMap.name': 'string',
  'gateway.staticIpName': 'string',
  'certificate.name': 'string',
  'dnsAuthorization.name': 'string',
  'namespaces.gateway': 'string',
  'namespaces.system': 'string',
  'namespaces.dataplane': 'string',
  'gcloud.skipExisting': 'boolean',
} as const;

export type ConfigKey = keyof typeof CONFIG_KEYS;

const GCP_NAME = {
  pattern: /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/,
  what: 'a GCP resource name (a lowercase letter, then lowercase letters, digits and -, at most 63, not ending in -)',
};
const K8S_NAME = {
  pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
  what: 'a Kubernetes namespace name (lowercase letters, digits and -, at most 63, starting and ending with a letter or digit)',
};

/**
 * The keys whose values name something and reach `gcloud` or `helm` as arguments (or a resource
 * name in the chart): the shape each must have. A value outside it — `--flags-file=/etc/passwd`, a
 * space, a slash — is refused (exit 2, naming the key) before any tool runs: a tool would read a
 * value starting with `-` as one of its flags.
 */
export const NAME_SHAPES: Partial<Record<ConfigKey, { pattern: RegExp; what: string }>> = {
  projectId: {
    pattern: /^(?:[a-z0-9.-]+:)?[a-z]([a-z0-9-]{0,28}[a-z0-9])?$/,
    what: 'a GCP project id (a lowercase letter, then lowercase letters, digits and -, at most 30)',
  },
  serveDomain: {
    pattern: /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
    what: 'a domain name (labels of letters, digits and -, separated by dots)',
  },
  securityPolicy: GCP_NAME,
  'certificateMap.name': GCP_NAME,
  'gateway.staticIpName': GCP_NAME,
  'certificate.name': GCP_NAME,
  'dnsAuthorization.name': GCP_NAME,
  'namespaces.gateway': K8S_NAME,
  'namespaces.system': K8S_NAME,
  'namespaces.dataplane': K8S_NAME,
};
type TypeOf<T> = T extends 'string' ? string : T extends 'boolean' ? boolean : never;
/** The file, flattened to its dotted keys. */
export type DeployConfig = { [K in ConfigKey]?: TypeOf<(typeof CONFIG_KEYS)[K]> };

export const IDENTITY_KEYS = ['customer', 'environment', 'serveUrl', 'proxy'] as const;
export type Identity = { [K in (typeof IDENTITY_KEYS)[number]]?: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isConfigKey = (k: string): k is ConfigKey => Object.hasOwn(CONFIG_KEYS, k);

/** The groups that dotted keys nest under (`certificateMap`, `gateway`, …). */
const GROUPS = new Set(
  Object.keys(CONFIG_KEYS)
    .filter((k) => k.includes('.'))
    .map((k) => k.slice(0, k.indexOf('.'))),
);

const readJson = (file: string, flag: string): unknown => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(flag, `${file}: cannot be read (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ConfigError(flag, `${file}: not valid JSON (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
  }
};

const checkType = (flag: string, file: string, key: string, want: 'string' | 'boolean', v: unknown): void => {
  if (want === 'boolean' && typeof v !== 'boolean')
    throw new ConfigError(flag, `${file}: '${key}' must be a boolean (true or false), not ${JSON.stringify(v)}`);
  if (want === 'string' && (typeof v !== 'string' || v.trim() === ''))
    throw new ConfigError(flag, `${file}: '${key}' must be a non-empty string, not ${JSON.stringify(v)}`);
};

/** Validates a parsed configuration file; the first unknown key or wrong type throws. */
export const parseConfig = (json: unknown, file: string): DeployConfig => {
  const flag = '--config';
  if (!isObject(json)) throw new ConfigError(flag, `${file}: must be a JSON object`);
  const out: Record<string, string | boolean> = {};
  const leaf = (key: string, v: unknown) => {
    if (!isConfigKey(key)) throw new ConfigError(flag, `${file}: unknown key '${key}'`);
    checkType(flag, file, key, CONFIG_KEYS[key], v);
    const shape = NAME_SHAPES[key];
    if (shape && typeof v === 'string' && !shape.pattern.test(v))
      throw new ConfigError(flag, `${file}: '${key}' must be ${shape.what}, not ${JSON.stringify(v)}`);
    if (typeof v === 'string' || typeof v === 'boolean') out[key] = v;
  };
  for (const [k, v] of Object.entries(json)) {
    if (!GROUPS.has(k)) {
      // A dotted key is written nested ({"certificateMap": {"name": …}}), never literally.
      if (k.includes('.')) throw new ConfigError(flag, `${file}: unknown key '${k}' (write dotted keys as nested objects)`);
      leaf(k, v);
      continue;
    }
    if (!isObject(v))
      throw new ConfigError(
        flag,
        `${file}: '${k}' must be an object (${Object.keys(CONFIG_KEYS)
          .filter((x) => x.startsWith(`${k}.`))
          .map((x) => x.slice(k.length + 1))
          .join(', ')})`,
      );
    for (const [sub, sv] of Object.entries(v)) leaf(`${k}.${sub}`, sv);
  }
  return out;
};

export const readConfigFile = (file: string): DeployConfig => parseConfig(readJson(file, '--config'), file);

/** The identity file: its four keys are checked; other keys (written by other tools) are ignored. */
export const readIdentityFile = (file: string): Identity => {
  const json = readJson(file, '--identity');
  if (!isObject(json)) throw new ConfigError('--identity', `${file}: must be a JSON object`);
  const out: Identity = {};
  for (const k of IDENTITY_KEYS) {
    const v = json[k];
    if (v === undefined || v === null) continue;
    checkType('--identity', file, k, 'string', v);
    if (typeof v === 'string') out[k] = v;
  }
  return out;
};
