import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Gateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { ReferenceGrant } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1beta1/ReferenceGrant';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { documents, Renderer } from '../deploy/chart-render.ts';
import { CHART, README, VALUES, withReadme, withValues } from '../deploy/chart-values.ts';
import { settingSpecs } from '../src/config/settings.ts';

/**
 * The Helm chart (deploy/helm/gateway), rendered by deploy/chart-render.ts (Helm cannot be
 * installed here) for a representative values file; every manifest parsed and validated against
 * the Kubernetes OpenAPI schemas (kubernetes-models), the Gateway API and prometheus-operator
 * schemas; the generated settings values and README table fresh.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const merge = (a: unknown, b: unknown): unknown => {
  if (!isObj(a) || !isObj(b)) return b;
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = merge(a[k], v);
  return out;
};

const templates = (): Record<string, string> => {
  const dir = join(CHART, 'templates');
  return Object.fromEntries(readdirSync(dir).map((f) => [`templates/${f}`, readFileSync(join(dir, f), 'utf8')]));
};
const chartYaml = Bun.YAML.parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Obj;
const defaults = Bun.YAML.parse(readFileSync(VALUES, 'utf8'));
const representative = Bun.YAML.parse(readFileSync(join(import.meta.dir, 'fixtures', 'chart', 'representative.yaml'), 'utf8'));

const render = (values: unknown, revision = 1): Obj[] => {
  const root = {
    Values: merge(defaults, values),
    Release: {
      Name: 'gw',
      Namespace: 'router-gateway',
      Service: 'Helm',
      Revision: revision,
      IsInstall: revision === 1,
      IsUpgrade: revision > 1,
    },
    Chart: { Name: chartYaml.name, Version: chartYaml.version, AppVersion: chartYaml.appVersion },
    Capabilities: {},
  };
  const out = new Renderer(templates()).render(root);
  return Object.values(out)
    .flatMap((text) => documents(text))
    .filter(isObj);
};

const VALIDATORS: Record<string, (o: Obj) => { validate(): void }> = {
  'apps/v1/Deployment': (o) => Object.assign(new Deployment(), o),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) => Object.assign(new HorizontalPodAutoscaler(), o),
  'batch/v1/Job': (o) => Object.assign(new Job(), o),
  'v1/Namespace': (o) => Object.assign(new Namespace(), o),
  'v1/Secret': (o) => Object.assign(new Secret(), o),
  'v1/Service': (o) => Object.assign(new Service(), o),
  'policy/v1/PodDisruptionBudget': (o) => Object.assign(new PodDisruptionBudget(), o),
  'gateway.networking.k8s.io/v1/Gateway': (o) => Object.assign(new Gateway(), o),
  'gateway.networking.k8s.io/v1/HTTPRoute': (o) => Object.assign(new HTTPRoute(), o),
  'gateway.networking.k8s.io/v1beta1/ReferenceGrant': (o) => Object.assign(new ReferenceGrant(), o),
  'monitoring.coreos.com/v1/ServiceMonitor': (o) => Object.assign(new ServiceMonitor(), o),
};

/** GKE's policy CRDs (no published model): the fields GKE requires. */
const checkGkePolicy = (o: Obj): void => {
  const spec = o.spec;
  if (
    !isObj(spec) ||
    !isObj(spec.targetRef) ||
    spec.targetRef.kind !== 'Service' ||
    typeof spec.targetRef.name !== 'string' ||
    !isObj(spec.default)
  ) {
    throw new Error(`${String(o.kind)}: spec.targetRef (Service) and spec.default are required`);
  }
};

const validate = (o: Obj): void => {
  const key = `${String(o.apiVersion)}/${String(o.kind)}`;
  if (o.apiVersion === 'networking.gke.io/v1') {
    checkGkePolicy(o);
    return;
  }
  const make = VALIDATORS[key];
  if (!make) throw new Error(`no schema for ${key}`);
  make(o).validate();
};

const find = (docs: Obj[], kind: string, name: string): Obj => {
  const d = docs.find((x) => x.kind === kind && isObj(x.metadata) && x.metadata.name === name);
  if (!d)
    throw new Error(
      `no ${kind} ${name} among ${docs.map((x) => `${String(x.kind)}/${String(isObj(x.metadata) ? x.metadata.name : '')}`).join(', ')}`,
    );
  return d;
};
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (Array.isArray(v) ? v[Number(k)] : isObj(v) ? v[String(k)] : undefined), o);
const envOf = (dep: Obj): Obj[] => (at(dep, 'spec', 'template', 'spec', 'containers', 0, 'env') as Obj[]) ?? [];

describe('chart rendered with a representative values file', () => {
  const docs = render(representative, 3);

  test('every manifest parses and is valid against the Kubernetes, Gateway API and prometheus-operator schemas', () => {
    expect(docs.length).toBeGreaterThan(15);
    for (const d of docs) expect(() => validate(d)).not.toThrow();
    const kinds = new Set(docs.map((d) => d.kind));
    for (const k of [
      'Deployment',
      'Service',
      'Job',
      'Secret',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Gateway',
      'HTTPRoute',
      'ReferenceGrant',
      'ServiceMonitor',
      'HealthCheckPolicy',
      'GCPBackendPolicy',
      'Namespace',
    ])
      expect(kinds.has(k)).toBe(true);
  });

  test('the schema check catches a wrong type (it is not a no-op)', () => {
    const dep = structuredClone(find(docs, 'Deployment', 'gw-gateway-management'));
    (at(dep, 'spec', 'template', 'spec') as Obj).terminationGracePeriodSeconds = 'soon';
    expect(() => validate(dep)).toThrow(/terminationGracePeriodSeconds/);
  });

  test('management plane: PostgreSQL and KEK from Secrets, GATEWAY_MIGRATE=0, probes, security context, grace above GATEWAY_SHUTDOWN_GRACE', () => {
    const dep = find(docs, 'Deployment', 'gw-gateway-management');
    const pod = at(dep, 'spec', 'template', 'spec') as Obj;
    const c = at(pod, 'containers', 0) as Obj;
    expect(c.args).toEqual(['serve', '--role', 'control']);
    const env = envOf(dep);
    expect(env.find((e) => e.name === 'DATABASE_URL')).toEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'gw-gateway-settings', key: 'DATABASE_URL' } },
    });
    expect(env.find((e) => e.name === 'GATEWAY_KEK')).toEqual({
      name: 'GATEWAY_KEK',
      valueFrom: { secretKeyRef: { name: 'gateway-kek', key: 'kek' } },
    });
    expect(env.find((e) => e.name === 'GATEWAY_MIGRATE')?.value).toBe('0');
    expect(env.find((e) => e.name === 'GATEWAY_HOST')?.value).toBe('0.0.0.0');
    expect(JSON.stringify(env)).not.toContain('postgres://');
    expect(pod.terminationGracePeriodSeconds).toBe(120 + 15); // GATEWAY_SHUTDOWN_GRACE=2m
    expect(at(c, 'startupProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'admin' });
    expect(at(c, 'readinessProbe', 'httpGet')).toEqual({ path: '/readyz', port: 'admin' });
    expect(at(c, 'livenessProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'admin' });
    expect(at(c, 'securityContext', 'readOnlyRootFilesystem')).toBe(true);
    expect(at(pod, 'securityContext', 'runAsNonRoot')).toBe(true);
    expect((pod.topologySpreadConstraints as Obj[]).map((t) => t.topologyKey)).toEqual([
      'topology.kubernetes.io/zone',
      'kubernetes.io/hostname',
    ]);
    expect(at(dep, 'spec', 'replicas')).toBeUndefined(); // the HPA owns it
    expect(find(docs, 'HorizontalPodAutoscaler', 'gw-gateway-management')).toBeDefined();
    expect(at(find(docs, 'PodDisruptionBudget', 'gw-gateway-management'), 'spec', 'minAvailable')).toBe(1);
  });

  test('the Secret holds the given secret values base64-encoded, not the existing-secret one', () => {
    const s = find(docs, 'Secret', 'gw-gateway-settings');
    expect(at(s, 'metadata', 'annotations', 'helm.sh/hook')).toBe('pre-install,pre-upgrade');
    expect(Buffer.from(String(at(s, 'data', 'DATABASE_URL')), 'base64').toString()).toBe('postgres://gateway:pw@db.internal:5432/gateway');
    expect(at(s, 'data', 'GATEWAY_KEK')).toBeUndefined();
    expect(Buffer.from(String(at(find(docs, 'Secret', 'gw-gateway-dataplane-settings'), 'data', 'REDIS_URL')), 'base64').toString()).toBe(
      'redis://redis.internal:6379',
    );
  });

  test('migrations: one hook Job per revision running `gateway migrate`', () => {
    const job = find(docs, 'Job', 'gw-gateway-migrate-3');
    expect(at(job, 'metadata', 'annotations', 'helm.sh/hook')).toBe('pre-install,pre-upgrade');
    expect(at(job, 'spec', 'template', 'spec', 'containers', 0, 'args')).toEqual(['migrate']);
    expect(at(job, 'spec', 'template', 'spec', 'restartPolicy')).toBe('Never');
  });

  test('data planes: one Deployment each from its service-account Secret, in the data-plane namespace, with overrides and no database', () => {
    const eu = find(docs, 'Deployment', 'gw-gateway-dp-eu-west');
    const us = find(docs, 'Deployment', 'gw-gateway-dp-us-east');
    expect(at(eu, 'metadata', 'namespace')).toBe('router-dataplane');
    expect(at(eu, 'spec', 'replicas')).toBe(3);
    expect(at(us, 'spec', 'replicas')).toBeUndefined();
    expect(at(eu, 'spec', 'template', 'spec', 'containers', 0, 'args')).toEqual([
      'serve',
      '--role',
      'data',
      '--service-account',
      '/etc/gateway/service-account/service-account.json',
    ]);
    expect(at(us, 'spec', 'template', 'spec', 'volumes', 0, 'secret')).toEqual({
      secretName: 'dp-us-east',
      items: [{ key: 'sa.json', path: 'sa.json' }],
    });
    const env = envOf(eu);
    expect(env.filter((e) => e.name === 'GATEWAY_LOG_LEVEL')).toEqual([{ name: 'GATEWAY_LOG_LEVEL', value: 'debug' }]);
    expect(env.some((e) => e.name === 'DATABASE_URL' || e.name === 'GATEWAY_KEK')).toBe(false);
    expect(env.find((e) => e.name === 'REDIS_URL')).toEqual({
      name: 'REDIS_URL',
      valueFrom: { secretKeyRef: { name: 'gw-gateway-dataplane-settings', key: 'REDIS_URL' } },
    });
    expect(at(eu, 'spec', 'template', 'spec', 'containers', 0, 'readinessProbe', 'httpGet')).toEqual({
      path: '/readyz',
      port: 'inference',
    });
    expect(at(find(docs, 'HorizontalPodAutoscaler', 'gw-gateway-dp-us-east'), 'spec', 'maxReplicas')).toBe(8);
  });

  test("JavaScriptCore sizes each pod's heap for its container's memory limit, unless a value is given", () => {
    const fromLimit = { name: 'BUN_JSC_forceRAMSize', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } };
    for (const name of ['gw-gateway-management', 'gw-gateway-dp-us-east']) {
      expect(envOf(find(docs, 'Deployment', name)).filter((e) => e.name === 'BUN_JSC_forceRAMSize')).toEqual([fromLimit]);
    }
    expect(envOf(find(docs, 'Deployment', 'gw-gateway-dp-eu-west')).filter((e) => e.name === 'BUN_JSC_forceRAMSize')).toEqual([
      { name: 'BUN_JSC_forceRAMSize', value: '402653184' },
    ]);
    const pinned = render(
      Bun.YAML.parse(
        readFileSync(join(import.meta.dir, 'fixtures', 'chart', 'representative.yaml'), 'utf8').replace(
          'GATEWAY_SHUTDOWN_GRACE: 2m',
          'GATEWAY_SHUTDOWN_GRACE: 2m\n  BUN_JSC_forceRAMSize: "1073741824"',
        ),
      ),
      3,
    );
    expect(envOf(find(pinned, 'Deployment', 'gw-gateway-management')).filter((e) => e.name === 'BUN_JSC_forceRAMSize')).toEqual([
      { name: 'BUN_JSC_forceRAMSize', value: '1073741824' },
    ]);
  });

  test('GKE Gateway with the certificate map and static IP; HTTPRoute to the inference data plane; policies; ServiceMonitor', () => {
    const gw = find(docs, 'Gateway', 'gw-gateway');
    expect(at(gw, 'metadata', 'annotations', 'networking.gke.io/certmap')).toBe('acme-map');
    expect(at(gw, 'spec', 'addresses')).toEqual([{ type: 'NamedAddress', value: 'acme-gw-ip' }]);
    expect(at(gw, 'spec', 'gatewayClassName')).toBe('gke-l7-global-external-managed');
    const route = find(docs, 'HTTPRoute', 'gw-gateway-inference');
    expect(at(route, 'spec', 'hostnames')).toEqual(['gateway.acme.example']);
    expect(at(route, 'spec', 'rules', 0, 'backendRefs', 0)).toEqual({
      name: 'gw-gateway-dp-eu-west',
      namespace: 'router-dataplane',
      port: 8080,
    });
    expect(at(find(docs, 'HTTPRoute', 'gw-gateway-management'), 'spec', 'hostnames')).toEqual(['admin.gateway.acme.example']);
    expect(at(find(docs, 'GCPBackendPolicy', 'gw-gateway-dp-eu-west'), 'spec', 'default', 'securityPolicy')).toBe('acme-armor');
    expect(
      at(find(docs, 'HealthCheckPolicy', 'gw-gateway-dp-eu-west'), 'spec', 'default', 'config', 'httpHealthCheck', 'requestPath'),
    ).toBe('/readyz');
    const sm = find(docs, 'ServiceMonitor', 'gw-gateway');
    expect(at(sm, 'metadata', 'namespace')).toBe('router-system');
    expect(at(sm, 'spec', 'endpoints', 0)).toEqual({ port: 'metrics', path: '/metrics', interval: '30s' });
    expect(at(find(docs, 'Service', 'gw-gateway-dp-eu-west'), 'spec', 'ports', 1, 'port')).toBe(9464);
  });
});

describe('chart values', () => {
  const minimal = {
    serveUrl: 'https://gw.example',
    certificateMap: { name: 'm' },
    secretSettings: { DATABASE_URL: { value: 'postgres://x@y/z' }, GATEWAY_KEK: { existingSecret: 'kek' } },
  };

  test("the install command's values alone render valid manifests (role all serves /v1 from the management plane)", () => {
    const docs = render(minimal);
    for (const d of docs) expect(() => validate(d)).not.toThrow();
    expect(at(find(docs, 'HTTPRoute', 'gw-gateway-inference'), 'spec', 'rules', 0, 'backendRefs', 0)).toEqual({
      name: 'gw-gateway-management',
      namespace: 'router-gateway',
      port: 8080,
    });
    expect(at(find(docs, 'Deployment', 'gw-gateway-management'), 'spec', 'replicas')).toBe(2);
    expect(at(find(docs, 'Deployment', 'gw-gateway-management'), 'spec', 'template', 'spec', 'terminationGracePeriodSeconds')).toBe(45);
    expect(docs.some((d) => d.kind === 'ServiceMonitor' || d.kind === 'ReferenceGrant')).toBe(false);
    expect(at(find(docs, 'Gateway', 'gw-gateway'), 'spec', 'addresses')).toBeUndefined();
  });

  test('DATABASE_URL and GATEWAY_KEK are required; the message names the value', () => {
    expect(() => render({ ...minimal, secretSettings: { GATEWAY_KEK: { value: 'k' } } })).toThrow(/secretSettings.DATABASE_URL/);
    expect(() => render({ ...minimal, secretSettings: { DATABASE_URL: { value: 'postgres://x' } } })).toThrow(/secretSettings.GATEWAY_KEK/);
  });

  test('every gateway setting is a value (settings or secretSettings), and the generated parts are fresh', () => {
    const v = defaults as { settings: Obj; secretSettings: Obj };
    for (const s of settingSpecs()) expect(Object.hasOwn(s.secret ? v.secretSettings : v.settings, s.name)).toBe(true);
    expect(withValues(readFileSync(VALUES, 'utf8'))).toBe(readFileSync(VALUES, 'utf8'));
    expect(withReadme(readFileSync(README, 'utf8'))).toBe(readFileSync(README, 'utf8'));
  });
});
