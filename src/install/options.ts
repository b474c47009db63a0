import { ConfigError } from '../config/settings.ts';

/** The three workflows of the seed (one is required). */
export type Workflow = 'ack' | 'dry-run' | 'apply';

export interface InstallFlags {
  platform?: string;
  config?: string;
  identity?: string;
  customer?: string;
  environment?: string;
  serveUrl?: string;
  workflow?: Workflow;
  chart?: string;
  release?: string;
  valuesOut?: string;
  help: boolean;
}

type ValueFlag = Exclude<keyof InstallFlags, 'workflow' | 'help'>;

const VALUE_FLAGS: Record<string, ValueFlag> = {
  '--platform': 'platform',
  '--config': 'config',
  '--identity': 'identity',
  '--customer': 'customer',
  '--environment': 'environment',
  '--serve-url': 'serveUrl',
  '--chart': 'chart',
  '--release': 'release',
  '--values-out': 'valuesOut',
};

const WORKFLOW_FLAGS: Record<string, Workflow> = { '--ack-prereqs': 'ack', '--dry-run-prereqs': 'dry-run', '--apply-prereqs': 'apply' };

export const DEFAULT_RELEASE = 'gateway';

/** Helm's release names (it passes them on as Kubernetes names): a value starting with `-` would be read as a flag. */
const RELEASE_NAME = /^(?=.{1,53}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const HELP = `usage: gateway install --platform gcp [--config FILE] [--identity FILE] [--customer C]
         [--environment E] [--serve-url URL] [--ack-prereqs | --dry-run-prereqs | --apply-prereqs]
         [--chart PATH] [--release NAME] [--values-out FILE]
(from source: bun src/main.ts install …)

Creates the GCP prerequisites of the gateway (static IP, DNS authorization, managed certificate,
certificate map and its entry) with \`gcloud\`, then installs or upgrades the Helm release with
\`helm upgrade --install\`. Both are found on PATH.

  --platform gcp           platform type (required). \`azure\` is not supported yet.
  --config FILE            deployment configuration file (JSON): projectId, serveDomain, customer,
                           environment, serveUrl, securityPolicy, certificateMap.name,
                           gateway.staticIpName, certificate.name, dnsAuthorization.name,
                           namespaces.gateway|system|dataplane, gcloud.skipExisting (dotted keys are
                           nested objects). An unknown key, a wrong type, or a name-shaped value
                           that is not a name (e.g. starting with -) is refused (exit 2).
  --identity FILE          identity file (JSON): customer, environment, serveUrl, proxy (legacy);
                           supplies defaults below the flags and the configuration file.
  --customer C             Helm value \`customer\` (wins over the file's and the identity's).
  --environment E          Helm value \`environment\`; required when the customer is \`saas\`.
  --serve-url URL          Helm value \`serveUrl\`. Otherwise: config serveUrl, then https:// + config
                           serveDomain, then identity serveUrl, then identity proxy.
  --ack-prereqs            prerequisites exist already (made outside the CLI): install only; needs
                           customer, serveUrl and certificateMap.name.
  --dry-run-prereqs        print the gcloud commands, one a line, and run nothing; needs projectId
                           and certificateMap.name (plus certificate.name and serveDomain when
                           certificate automation is on: any of them or dnsAuthorization.name set).
  --apply-prereqs          run those gcloud commands in order (each with --project <projectId>;
                           "already exists" is skipped when gcloud.skipExisting is true), then
                           install; needs the keys of both workflows above.
  --chart PATH             the chart (default: deploy/helm/gateway of this checkout).
  --release NAME           Helm release name (default: ${DEFAULT_RELEASE}).
  --values-out FILE        keep the generated values file here (default: a temporary file).
  --help                   this text.

Precedence: flag, then --config file, then identity file, then defaults (namespaces.gateway
router-gateway, namespaces.system router-system, namespaces.dataplane router-dataplane,
gcloud.skipExisting false, dnsAuthorization.name: the serve domain lowercased, each character
other than a-z, 0-9 and - replaced by -, then -dns-auth: Gateway.Acme.example gives
gateway-acme-example-dns-auth).
Exit codes: 0 done, 2 bad or missing input (one line naming it), 1 a gcloud or helm failure.`;

/** Parses `install`'s argv; a bad flag throws a ConfigError naming it. */
export const parseFlags = (argv: readonly string[]): InstallFlags => {
  const flags: InstallFlags = { help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      flags.help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const workflow = WORKFLOW_FLAGS[name];
    if (workflow) {
      if (eq > 0) throw new ConfigError(name, 'takes no value');
      if (flags.workflow && flags.workflow !== workflow)
        throw new ConfigError(name, 'choose one of --ack-prereqs, --dry-run-prereqs, --apply-prereqs');
      flags.workflow = workflow;
      continue;
    }
    const key = VALUE_FLAGS[name];
    if (!key) throw new ConfigError(name, `unknown flag (see install --help)`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--'))) throw new ConfigError(name, 'needs a value');
    if (key === 'release' && !RELEASE_NAME.test(value))
      throw new ConfigError(
        name,
        `must be a Helm release name (lowercase letters, digits, - and ., at most 53, starting and ending with a letter or digit), not ${JSON.stringify(value)}`,
      );
    flags[key] = value;
  }
  return flags;
};
