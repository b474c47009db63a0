import { ConfigError } from '../config/settings.ts';
import type { DeployConfig, Identity } from './config-file.ts';
import type { InstallFlags, Workflow } from './options.ts';

/**
 * What an install does, decided before anything runs: the values after precedence (flag, then the
 * configuration file, then the identity file, then defaults), the keys the chosen workflow needs,
 * the `gcloud` prerequisite commands and the Helm values (contract §9).
 */

export const DEFAULT_NAMESPACES = { gateway: 'router-gateway', system: 'router-system', dataplane: 'router-dataplane' } as const;

/** The seed's normalisation: lowercased, every character outside [a-z0-9-] replaced by `-`. */
export const normalizeDomain = (domain: string): string => domain.toLowerCase().replace(/[^a-z0-9-]/g, '-');

export interface Resolved {
  projectId?: string;
  serveDomain?: string;
  customer?: string;
  environment?: string;
  serveUrl?: string;
  securityPolicy?: string;
  certificateMapName?: string;
  staticIpName?: string;
  certificateName?: string;
  dnsAuthorizationName?: string;
  namespaces: { gateway: string; system: string; dataplane: string };
  skipExisting: boolean;
  /** Certificate and DNS automation: on when certificate.name, serveDomain or dnsAuthorization.name is set. */
  certificateAutomation: boolean;
}

/** The serve URL order: `--serve-url`, `serveUrl`, `https://` + `serveDomain`, identity `serveUrl`, identity `proxy`. */
export const resolveServeUrl = (flags: InstallFlags, config: DeployConfig, identity: Identity): string | undefined =>
  flags.serveUrl ??
  config.serveUrl ??
  (config.serveDomain ? `https://${config.serveDomain}` : undefined) ??
  identity.serveUrl ??
  identity.proxy;

export const resolve = (flags: InstallFlags, config: DeployConfig, identity: Identity): Resolved => {
  const serveDomain = config.serveDomain;
  const certificateAutomation =
    config['certificate.name'] !== undefined || serveDomain !== undefined || config['dnsAuthorization.name'] !== undefined;
  return {
    projectId: config.projectId,
    serveDomain,
    customer: flags.customer ?? config.customer ?? identity.customer,
    environment: flags.environment ?? config.environment ?? identity.environment,
    serveUrl: resolveServeUrl(flags, config, identity),
    securityPolicy: config.securityPolicy,
    certificateMapName: config['certificateMap.name'],
    staticIpName: config['gateway.staticIpName'],
    certificateName: config['certificate.name'],
    dnsAuthorizationName:
      config['dnsAuthorization.name'] ?? (certificateAutomation && serveDomain ? `${normalizeDomain(serveDomain)}-dns-auth` : undefined),
    namespaces: {
      gateway: config['namespaces.gateway'] ?? DEFAULT_NAMESPACES.gateway,
      system: config['namespaces.system'] ?? DEFAULT_NAMESPACES.system,
      dataplane: config['namespaces.dataplane'] ?? DEFAULT_NAMESPACES.dataplane,
    },
    skipExisting: config['gcloud.skipExisting'] ?? false,
    certificateAutomation,
  };
};

/** Where each required key can come from, as the one-line error names it. */
const SOURCES = {
  projectId: 'config key projectId',
  'certificateMap.name': 'config key certificateMap.name',
  'certificate.name': 'config key certificate.name',
  serveDomain: 'config key serveDomain',
  customer: '--customer, config key customer or identity customer',
  serveUrl: '--serve-url, config key serveUrl or serveDomain, identity serveUrl or proxy',
  environment: '--environment, config key environment or identity environment (customer is saas)',
} as const;

type Required = keyof typeof SOURCES;

/** The keys `workflow` needs that `r` lacks, in a stable order. */
export const missingKeys = (workflow: Workflow, r: Resolved): Required[] => {
  const present: Record<Required, boolean> = {
    projectId: r.projectId !== undefined,
    'certificateMap.name': r.certificateMapName !== undefined,
    'certificate.name': r.certificateName !== undefined,
    serveDomain: r.serveDomain !== undefined,
    customer: r.customer !== undefined,
    serveUrl: r.serveUrl !== undefined,
    environment: r.environment !== undefined,
  };
  const need: Required[] = [];
  if (workflow !== 'ack') need.push('projectId', 'certificateMap.name');
  if (workflow !== 'ack' && r.certificateAutomation) need.push('certificate.name', 'serveDomain');
  if (workflow !== 'dry-run') {
    need.push('customer', 'serveUrl', 'certificateMap.name');
    if (r.customer === 'saas') need.push('environment');
  }
  return [...new Set(need)].filter((k) => !present[k]);
};

const WORKFLOW_FLAG: Record<Workflow, string> = { ack: '--ack-prereqs', 'dry-run': '--dry-run-prereqs', apply: '--apply-prereqs' };

/** Throws one ConfigError naming every missing key and what supplies it. */
export const requireKeys = (workflow: Workflow, r: Resolved): void => {
  const missing = missingKeys(workflow, r);
  if (missing.length === 0) return;
  throw new ConfigError(WORKFLOW_FLAG[workflow], `missing ${missing.map((k) => `${k} (from ${SOURCES[k]})`).join('; ')}`);
};

/**
 * The prerequisite commands (arguments after `gcloud`), in the order they run, in the contract's
 * form. Every name in them is a checked name (config-file.ts NAME_SHAPES) or built from a checked
 * domain, so none starts with `-` and none can be read as a flag.
 */
export const gcloudCommands = (r: Resolved): string[][] => {
  const project = ['--project', r.projectId ?? ''];
  const out: string[][] = [];
  if (r.staticIpName) out.push(['compute', 'addresses', 'create', r.staticIpName, '--global', ...project]);
  const domain = r.serveDomain;
  const dnsAuth = r.dnsAuthorizationName;
  const cert = r.certificateName;
  const automate = r.certificateAutomation && domain !== undefined && dnsAuth !== undefined && cert !== undefined;
  if (automate) {
    out.push(['certificate-manager', 'dns-authorizations', 'create', dnsAuth, '--domain', domain, ...project]);
    out.push(['certificate-manager', 'certificates', 'create', cert, '--domains', domain, '--dns-authorizations', dnsAuth, ...project]);
  }
  if (r.certificateMapName) out.push(['certificate-manager', 'maps', 'create', r.certificateMapName, ...project]);
  if (automate && r.certificateMapName) {
    out.push([
      'certificate-manager',
      'maps',
      'entries',
      'create',
      `${normalizeDomain(domain)}-entry`,
      '--map',
      r.certificateMapName,
      '--certificates',
      cert,
      '--hostname',
      domain,
      ...project,
    ]);
  }
  return out;
};

/** The values file: the seed's Helm values, nested as the chart reads them; unset optional keys are left to the chart. */
export const helmValues = (r: Resolved): Record<string, unknown> => {
  const v: Record<string, unknown> = {};
  if (r.customer !== undefined) v.customer = r.customer;
  if (r.environment !== undefined) v.environment = r.environment;
  if (r.serveUrl !== undefined) v.serveUrl = r.serveUrl;
  if (r.securityPolicy !== undefined) v.securityPolicy = r.securityPolicy;
  if (r.certificateMapName !== undefined) v.certificateMap = { name: r.certificateMapName };
  if (r.staticIpName !== undefined) v.gateway = { staticIpName: r.staticIpName };
  v.namespaces = { ...r.namespaces };
  return v;
};

/** A command as one shell-safe line (dry-run output). */
export const shellLine = (argv: readonly string[]): string =>
  argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
