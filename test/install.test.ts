import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CHART, runInstall } from '../src/install/index.ts';
import { CONFIG_KEYS } from '../src/install/config-file.ts';

/**
 * `gateway install --platform gcp` (contract §9) with fake `gcloud` and `helm` first on PATH: they
 * record their arguments (and the values file helm was given); the fake gcloud remembers what it
 * created and answers "already exists" the second time, as the real one does.
 */

const dir = mkdtempSync(join(tmpdir(), 'install-test-'));
const bin = join(dir, 'bin');
const state = join(dir, 'state');
const calls = join(dir, 'calls.log');
mkdirSync(bin);
writeFileSync(
  join(bin, 'gcloud'),
  `#!/bin/sh
printf 'gcloud' >> "${calls}"; for a in "$@"; do printf ' %s' "$a" >> "${calls}"; done; echo >> "${calls}"
[ -n "$FAKE_GCLOUD_FAIL" ] && case "$*" in *"$FAKE_GCLOUD_FAIL"*) echo "ERROR: (gcloud) PERMISSION_DENIED: caller lacks permission" >&2; exit 1;; esac
key=$(printf '%s' "$1_$2_$3_$4_$5" | tr -c 'a-zA-Z0-9_-' '_')
if [ -e "${state}/$key" ]; then echo "ERROR: (gcloud.$1.$2.$3) Resource '$4' already exists" >&2; exit 1; fi
mkdir -p "${state}"; touch "${state}/$key"; echo "Created [$4]."
`,
);
writeFileSync(
  join(bin, 'helm'),
  `#!/bin/sh
printf 'helm' >> "${calls}"; for a in "$@"; do printf ' %s' "$a" >> "${calls}"; done; echo >> "${calls}"
prev=""; for a in "$@"; do [ "$prev" = "--values" ] && cp "$a" "${dir}/values.seen.yaml"; prev="$a"; done
[ -n "$FAKE_HELM_FAIL" ] && { echo "Error: UPGRADE FAILED: cannot patch" >&2; exit 1; }
echo 'Release "gw" has been upgraded. Happy Helming!'
`,
);
chmodSync(join(bin, 'gcloud'), 0o755);
chmodSync(join(bin, 'helm'), 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, json: unknown): string => {
  const p = join(dir, name);
  writeFileSync(p, typeof json === 'string' ? json : JSON.stringify(json));
  return p;
};

interface Run {
  code: number;
  out: string;
  err: string;
  calls: string[];
  values: unknown;
}

const install = async (args: string[], env: Record<string, string> = {}): Promise<Run> => {
  rmSync(calls, { force: true });
  rmSync(join(dir, 'values.seen.yaml'), { force: true });
  let out = '';
  let err = '';
  const code = await runInstall(args, {
    env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, ...env },
    cwd: dir,
    out: { write: (s: string) => (out += s) },
    err: { write: (s: string) => (err += s) },
  });
  const seen = join(dir, 'values.seen.yaml');
  return {
    code,
    out,
    err,
    calls: existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n').filter(Boolean) : [],
    values: existsSync(seen) ? Bun.YAML.parse(readFileSync(seen, 'utf8')) : undefined,
  };
};

const FULL = {
  projectId: 'acme-prod',
  serveDomain: 'Gateway.Acme.example',
  customer: 'acme',
  environment: 'prod',
  securityPolicy: 'acme-armor',
  certificateMap: { name: 'gw-map' },
  gateway: { staticIpName: 'gw-ip' },
  certificate: { name: 'gw-cert' },
  namespaces: { gateway: 'gw-ns' },
  gcloud: { skipExisting: true },
};

const PREREQS = [
  'gcloud compute addresses create gw-ip --global --project acme-prod',
  'gcloud certificate-manager dns-authorizations create gateway-acme-example-dns-auth --domain Gateway.Acme.example --project acme-prod',
  'gcloud certificate-manager certificates create gw-cert --domains Gateway.Acme.example --dns-authorizations gateway-acme-example-dns-auth --project acme-prod',
  'gcloud certificate-manager maps create gw-map --project acme-prod',
  'gcloud certificate-manager maps entries create gateway-acme-example-entry --map gw-map --certificates gw-cert --hostname Gateway.Acme.example --project acme-prod',
];

beforeEach(() => rmSync(state, { recursive: true, force: true }));

describe('workflows', () => {
  test('--dry-run-prereqs prints the gcloud commands in order, one a line, and runs nothing', async () => {
    const r = await install(['--platform', 'gcp', '--config', file('full.json', FULL), '--dry-run-prereqs']);
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n')).toEqual(PREREQS);
    expect(r.calls).toEqual([]);
  });

  test('--apply-prereqs runs them in that order with --project, then helm upgrade --install with the generated values', async () => {
    const r = await install([
      '--platform',
      'gcp',
      '--config',
      file('full.json', FULL),
      '--apply-prereqs',
      '--release',
      'gw',
      '--chart',
      '/charts/gateway',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const helm = r.calls.pop() ?? '';
    expect(r.calls).toEqual(PREREQS);
    // Options first, ended by `--`: the release and the chart are never read as flags.
    expect(helm).toMatch(/^helm upgrade --install --namespace gw-ns --create-namespace --values \S+ -- gw \/charts\/gateway$/);
    expect(r.values).toEqual({
      customer: 'acme',
      environment: 'prod',
      serveUrl: 'https://Gateway.Acme.example',
      securityPolicy: 'acme-armor',
      certificateMap: { name: 'gw-map' },
      gateway: { staticIpName: 'gw-ip' },
      namespaces: { gateway: 'gw-ns', system: 'router-system', dataplane: 'router-dataplane' },
    });
  });

  test('gcloud.skipExisting: a second apply is idempotent (every "already exists" skipped, helm runs again)', async () => {
    const config = file('full.json', FULL);
    expect((await install(['--platform', 'gcp', '--config', config, '--apply-prereqs'])).code).toBe(0);
    const again = await install(['--platform', 'gcp', '--config', config, '--apply-prereqs']);
    expect(again.code).toBe(0);
    expect(again.out.match(/exists, skipped \(gcloud.skipExisting\)/g)?.length).toBe(5);
    expect(again.calls.filter((c) => c.startsWith('helm upgrade --install'))).toHaveLength(1);
  });

  test('without gcloud.skipExisting (default false) "already exists" is an error: exit 1, helm not run', async () => {
    const config = file('noskip.json', { ...FULL, gcloud: undefined });
    expect((await install(['--platform', 'gcp', '--config', config, '--apply-prereqs'])).code).toBe(0);
    const again = await install(['--platform', 'gcp', '--config', config, '--apply-prereqs']);
    expect(again.code).toBe(1);
    expect(again.err).toContain(
      "gcloud compute addresses create gw-ip --global --project acme-prod failed (exit 1): ERROR: (gcloud.compute.addresses.create) Resource 'gw-ip' already exists (set gcloud.skipExisting",
    );
    expect(again.calls).toHaveLength(1);
  });

  test('skipExisting skips only "already exists": another gcloud failure stops the run (exit 1)', async () => {
    const r = await install(['--platform', 'gcp', '--config', file('full.json', FULL), '--apply-prereqs'], {
      FAKE_GCLOUD_FAIL: 'certificates create',
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain('PERMISSION_DENIED');
    expect(r.calls).toEqual(PREREQS.slice(0, 3));
  });

  test('--ack-prereqs installs only (no gcloud), needing customer, serveUrl and certificateMap.name', async () => {
    const r = await install([
      '--platform',
      'gcp',
      '--ack-prereqs',
      '--customer',
      'acme',
      '--serve-url',
      'https://gw.acme.example',
      '--config',
      file('ack.json', { certificateMap: { name: 'm' } }),
    ]);
    expect(r.code).toBe(0);
    expect(r.calls).toHaveLength(1);
    expect(r.calls[0]).toStartWith('helm upgrade --install --namespace router-gateway --create-namespace --values ');
    expect(r.calls[0]).toEndWith(` -- gateway ${DEFAULT_CHART}`);
    expect(r.values).toEqual({
      customer: 'acme',
      serveUrl: 'https://gw.acme.example',
      certificateMap: { name: 'm' },
      namespaces: { gateway: 'router-gateway', system: 'router-system', dataplane: 'router-dataplane' },
    });
  });

  test('prerequisites without certificate automation: only the static IP (when set) and the map', async () => {
    const r = await install([
      '--platform',
      'gcp',
      '--dry-run-prereqs',
      '--config',
      file('min.json', { projectId: 'p', certificateMap: { name: 'm' } }),
    ]);
    expect(r.out.trim().split('\n')).toEqual(['gcloud certificate-manager maps create m --project p']);
    const ip = await install([
      '--platform',
      'gcp',
      '--dry-run-prereqs',
      '--config',
      file('ip.json', { projectId: 'p', certificateMap: { name: 'm' }, gateway: { staticIpName: 'ip1' } }),
    ]);
    expect(ip.out.trim().split('\n')).toEqual([
      'gcloud compute addresses create ip1 --global --project p',
      'gcloud certificate-manager maps create m --project p',
    ]);
  });

  test('dnsAuthorization.name overrides the default name', async () => {
    const r = await install([
      '--platform',
      'gcp',
      '--dry-run-prereqs',
      '--config',
      file('dns.json', { ...FULL, dnsAuthorization: { name: 'my-auth' } }),
    ]);
    expect(r.out).toContain('dns-authorizations create my-auth --domain Gateway.Acme.example');
    expect(r.out).toContain('--dns-authorizations my-auth --project');
  });

  test('--values-out keeps the values file where asked', async () => {
    const out = join(dir, 'kept-values.yaml');
    const r = await install([
      '--platform',
      'gcp',
      '--ack-prereqs',
      '--customer',
      'c',
      '--serve-url',
      'https://x.example',
      '--config',
      file('ack.json', { certificateMap: { name: 'm' } }),
      '--values-out',
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.calls[0]).toContain(` --values ${out} -- `);
    expect(Bun.YAML.parse(readFileSync(out, 'utf8'))).toEqual(r.values);
  });

  test('a helm failure is exit 1 with its message', async () => {
    const r = await install(
      [
        '--platform',
        'gcp',
        '--ack-prereqs',
        '--customer',
        'c',
        '--serve-url',
        'https://x.example',
        '--config',
        file('ack.json', { certificateMap: { name: 'm' } }),
      ],
      { FAKE_HELM_FAIL: '1' },
    );
    expect(r.code).toBe(1);
    expect(r.err).toBe('gateway install: helm upgrade --install failed (exit 1): Error: UPGRADE FAILED: cannot patch\n');
  });

  test('gcloud or helm missing from PATH: exit 1 naming it', async () => {
    let err = '';
    const code = await runInstall(
      [
        '--platform',
        'gcp',
        '--ack-prereqs',
        '--customer',
        'c',
        '--serve-url',
        'https://x.example',
        '--config',
        file('ack.json', { certificateMap: { name: 'm' } }),
      ],
      {
        env: { PATH: join(dir, 'empty') },
        cwd: dir,
        out: { write: () => undefined },
        err: { write: (s: string) => (err += s) },
      },
    );
    expect(code).toBe(1);
    expect(err).toBe('gateway install: helm was not found on PATH\n');
  });

  test('--values-out FILE: the values file is written even when helm is missing, and the message says where', async () => {
    const out = join(dir, 'kept-values.yaml');
    rmSync(out, { force: true });
    let err = '';
    const code = await runInstall(
      ['--platform', 'gcp', '--ack-prereqs', '--customer', 'c', '--serve-url', 'https://x.example', '--values-out', out, '--config'].concat(
        file('ack2.json', { certificateMap: { name: 'm' } }),
      ),
      {
        env: { PATH: join(dir, 'empty') },
        cwd: dir,
        out: { write: () => undefined },
        err: { write: (s: string) => (err += s) },
      },
    );
    expect(code).toBe(1);
    expect(err).toBe(`gateway install: helm was not found on PATH (the values are written to ${out})\n`);
    expect(Bun.YAML.parse(readFileSync(out, 'utf8'))).toMatchObject({
      customer: 'c',
      serveUrl: 'https://x.example',
      certificateMap: { name: 'm' },
    });
  });

  test('--help: every line reads as words (the dnsAuthorization default is spelled out)', async () => {
    let out = '';
    expect(
      await runInstall(['--help'], { env: {}, cwd: dir, out: { write: (s: string) => (out += s) }, err: { write: () => undefined } }),
    ).toBe(0);
    expect(out).not.toContain('-> ->');
    expect(out).toContain('dnsAuthorization.name: the serve domain lowercased');
    expect(out).toContain('gateway-acme-example-dns-auth');
  });
});

describe('precedence and the serve URL', () => {
  const identity = file('identity.json', {
    customer: 'id-cust',
    environment: 'id-env',
    serveUrl: 'https://identity.example',
    proxy: 'https://proxy.example',
    extra: 'ignored',
  });
  const ack = (config: unknown, ...flags: string[]) =>
    install([
      '--platform',
      'gcp',
      '--ack-prereqs',
      '--identity',
      identity,
      '--config',
      file('p.json', { certificateMap: { name: 'm' }, ...(config as object) }),
      ...flags,
    ]);

  test('flag > config file > identity file', async () => {
    expect(
      (await ack({ customer: 'file-cust', environment: 'file-env' }, '--customer', 'flag-cust', '--environment', 'flag-env')).values,
    ).toMatchObject({ customer: 'flag-cust', environment: 'flag-env' });
    expect((await ack({ customer: 'file-cust', environment: 'file-env' })).values).toMatchObject({
      customer: 'file-cust',
      environment: 'file-env',
    });
    expect((await ack({})).values).toMatchObject({ customer: 'id-cust', environment: 'id-env' });
  });

  test('serve URL: --serve-url, then serveUrl, then https:// + serveDomain, then identity serveUrl, then identity proxy', async () => {
    expect(
      (await ack({ serveUrl: 'https://file.example', serveDomain: 'dom.example' }, '--serve-url', 'https://flag.example')).values,
    ).toMatchObject({ serveUrl: 'https://flag.example' });
    expect((await ack({ serveUrl: 'https://file.example', serveDomain: 'dom.example' })).values).toMatchObject({
      serveUrl: 'https://file.example',
    });
    expect((await ack({ serveDomain: 'dom.example' })).values).toMatchObject({ serveUrl: 'https://dom.example' });
    expect((await ack({})).values).toMatchObject({ serveUrl: 'https://identity.example' });
    const legacy = file('legacy.json', { customer: 'c', proxy: 'https://proxy.example' });
    const r = await install([
      '--platform',
      'gcp',
      '--ack-prereqs',
      '--identity',
      legacy,
      '--config',
      file('p2.json', { certificateMap: { name: 'm' } }),
    ]);
    expect(r.values).toMatchObject({ serveUrl: 'https://proxy.example' });
  });

  test('defaults: namespaces router-gateway, router-system, router-dataplane; release gateway', async () => {
    const r = await ack({});
    expect(r.values).toMatchObject({ namespaces: { gateway: 'router-gateway', system: 'router-system', dataplane: 'router-dataplane' } });
    expect(r.calls[0]).toContain(' --namespace router-gateway ');
    expect(r.calls[0]).toEndWith(` -- gateway ${DEFAULT_CHART}`);
  });
});

describe('refusals (exit 2, one line naming it)', () => {
  const refuse = async (args: string[], message: string | RegExp) => {
    const r = await install(args);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    if (typeof message === 'string') expect(r.err).toContain(message);
    else expect(r.err).toMatch(message);
    expect(r.calls).toEqual([]);
  };

  test('missing keys: every one named with where it comes from', async () => {
    await refuse(
      ['--platform', 'gcp', '--apply-prereqs', '--customer', 'saas'],
      'gateway install: --apply-prereqs: missing projectId (from config key projectId); certificateMap.name (from config key certificateMap.name); serveUrl (from --serve-url, config key serveUrl or serveDomain, identity serveUrl or proxy); environment (from --environment, config key environment or identity environment (customer is saas))',
    );
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs'],
      '--ack-prereqs: missing customer (from --customer, config key customer or identity customer); serveUrl (from',
    );
    await refuse(
      [
        '--platform',
        'gcp',
        '--dry-run-prereqs',
        '--config',
        file('cert.json', { projectId: 'p', certificateMap: { name: 'm' }, serveDomain: 'd.example' }),
      ],
      '--dry-run-prereqs: missing certificate.name (from config key certificate.name)',
    );
    await refuse(
      [
        '--platform',
        'gcp',
        '--dry-run-prereqs',
        '--config',
        file('cert2.json', { projectId: 'p', certificateMap: { name: 'm' }, certificate: { name: 'c' } }),
      ],
      'missing serveDomain (from config key serveDomain)',
    );
  });

  test('environment is required only when the customer is saas', async () => {
    const config = file('saas.json', { certificateMap: { name: 'm' }, serveUrl: 'https://x.example' });
    await refuse(['--platform', 'gcp', '--ack-prereqs', '--customer', 'saas', '--config', config], 'missing environment');
    expect(
      (await install(['--platform', 'gcp', '--ack-prereqs', '--customer', 'saas', '--environment', 'eu', '--config', config])).code,
    ).toBe(0);
  });

  test('unknown keys and wrong types in the configuration file, each named', async () => {
    await refuse(['--platform', 'gcp', '--ack-prereqs', '--config', file('u1.json', { projectID: 'x' })], "unknown key 'projectID'");
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--config', file('u2.json', { certificateMap: { nmae: 'x' } })],
      "unknown key 'certificateMap.nmae'",
    );
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--config', file('u3.json', { 'certificateMap.name': 'x' })],
      "unknown key 'certificateMap.name'",
    );
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--config', file('t1.json', { gcloud: { skipExisting: 'yes' } })],
      "'gcloud.skipExisting' must be a boolean",
    );
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--config', file('t2.json', { projectId: 42 })],
      "'projectId' must be a non-empty string",
    );
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--config', file('t3.json', { namespaces: 'router' })],
      "'namespaces' must be an object",
    );
    await refuse(['--platform', 'gcp', '--ack-prereqs', '--config', file('t4.json', '{ not json')], 'not valid JSON');
    await refuse(['--platform', 'gcp', '--ack-prereqs', '--config', join(dir, 'absent.json')], 'cannot be read');
    await refuse(['--platform', 'gcp', '--ack-prereqs', '--identity', file('i1.json', { customer: 7 })], '--identity: ');
  });

  test('a name-shaped value that is not a name (a flag, a space, a slash, a newline) is refused before any tool runs, naming the key', async () => {
    const base = { projectId: 'acme-prod', customer: 'acme', serveUrl: 'https://x.example', certificateMap: { name: 'gw-map' } };
    const cases: [string, Record<string, unknown>][] = [
      ['certificateMap.name', { certificateMap: { name: '--flags-file=/etc/passwd' } }],
      ['projectId', { projectId: '--impersonate-service-account=evil@x.iam.gserviceaccount.com' }],
      ['gateway.staticIpName', { gateway: { staticIpName: '-q' } }],
      ['certificate.name', { certificate: { name: 'gw cert' } }],
      ['dnsAuthorization.name', { dnsAuthorization: { name: 'a/b' } }],
      ['serveDomain', { serveDomain: '--domain=evil.example' }],
      ['namespaces.gateway', { namespaces: { gateway: '--kubeconfig=/tmp/k' } }],
      ['namespaces.system', { namespaces: { system: 'Router' } }],
      ['securityPolicy', { securityPolicy: 'armor\n--x' }],
    ];
    for (const [key, over] of cases) {
      for (const workflow of ['--apply-prereqs', '--dry-run-prereqs', '--ack-prereqs']) {
        const r = await install(['--platform', 'gcp', workflow, '--config', file('names.json', { ...base, ...over })]);
        expect(r.code).toBe(2);
        expect(r.err).toStartWith(`gateway install: --config: ${join(dir, 'names.json')}: '${key}' must be `);
        expect(r.err.trim().split('\n')).toHaveLength(1);
        expect(r.out).toBe('');
        expect(r.calls).toEqual([]);
      }
    }
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--config', file('ok.json', base), '--release=--post-renderer=/bin/sh'],
      '--release: must be a Helm release name',
    );
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--config', file('ok.json', base), '--release', '-x'],
      '--release: must be a Helm release name',
    );
  });

  test('every key of the seed is accepted with its type', async () => {
    const all = {
      projectId: 'p',
      serveDomain: 'd.example',
      customer: 'c',
      environment: 'e',
      serveUrl: 'https://u.example',
      securityPolicy: 's',
      certificateMap: { name: 'm' },
      gateway: { staticIpName: 'i' },
      certificate: { name: 'c' },
      dnsAuthorization: { name: 'a' },
      namespaces: { gateway: 'g', system: 's', dataplane: 'd' },
      gcloud: { skipExisting: false },
    };
    expect(Object.keys(CONFIG_KEYS)).toHaveLength(14);
    const r = await install(['--platform', 'gcp', '--dry-run-prereqs', '--config', file('all.json', all)]);
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n')).toHaveLength(5);
  });

  test('flags: platform required, azure not supported yet (naming what it would need), one workflow, unknown flag', async () => {
    await refuse(['--ack-prereqs'], '--platform: required (gcp)');
    await refuse(['--platform', 'aws', '--ack-prereqs'], "'aws' is not a platform type");
    await refuse(['--platform', 'azure', '--ack-prereqs'], /azure platform type is not supported yet: it would need .*az` CLI/);
    await refuse(['--platform', 'gcp'], 'choose a workflow');
    await refuse(
      ['--platform', 'gcp', '--ack-prereqs', '--apply-prereqs'],
      'choose one of --ack-prereqs, --dry-run-prereqs, --apply-prereqs',
    );
    await refuse(['--platform', 'gcp', '--ack-prereqs', '--bogus'], '--bogus: unknown flag');
    await refuse(['--platform', 'gcp', '--ack-prereqs', '--customer'], '--customer: needs a value');
  });
});

describe('the CLI', () => {
  test('`bun src/main.ts install --help` documents every flag (exit 0); a refusal exits 2 from the real entry point', async () => {
    const root = join(import.meta.dir, '..');
    const help = Bun.spawnSync(['bun', 'src/main.ts', 'install', '--help'], { cwd: root, stdout: 'pipe', stderr: 'pipe' });
    expect(help.exitCode).toBe(0);
    const text = help.stdout.toString();
    for (const flag of [
      '--platform',
      '--config',
      '--identity',
      '--customer',
      '--environment',
      '--serve-url',
      '--ack-prereqs',
      '--dry-run-prereqs',
      '--apply-prereqs',
      '--chart',
      '--release',
      '--values-out',
      '--help',
    ])
      expect(text).toContain(`  ${flag}`);
    for (const key of Object.keys(CONFIG_KEYS)) expect(text).toContain(key.split('.')[0] ?? key);
    const bad = Bun.spawnSync(
      ['bun', 'src/main.ts', 'install', '--platform', 'gcp', '--ack-prereqs', '--config', file('u1.json', { projectID: 'x' })],
      { cwd: root, stdout: 'pipe', stderr: 'pipe' },
    );
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.toString()).toContain("unknown key 'projectID'");
  });
});
