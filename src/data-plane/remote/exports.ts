import type { ConfigDocument } from '../../api/config-document.ts';
import { headers as headerPairs, OTLP_PROTOCOLS, type OtlpProtocol } from '../../config/setting-kinds.ts';
import { log } from '../../core/log.ts';
import type { TelemetryConfig } from '../../config/telemetry.ts';

/**
 * Where a separate data plane exports its traces and OTLP metrics: its service account's
 * `dataExports.telemetry` (docs/observability.md, "A separate data plane's exports").
 *
 * Precedence: an OTLP endpoint set in the data plane's own environment (OTEL_EXPORTER_OTLP_ENDPOINT,
 * `…_TRACES_ENDPOINT`, `…_METRICS_ENDPOINT`) wins — the operator's local intent — and the account's
 * settings are not used; otherwise the account's endpoint applies; neither: nothing is exported (the
 * metrics listener is unaffected). The identity file's settings apply at start; the management
 * plane's (the pulled document's `dataExports`, secrets sealed) from the first pull on, and again
 * whenever a pulled document's differ.
 *
 * - `endpoint`: the OTLP base (`/v1/traces` and `/v1/metrics` appended over HTTP; gRPC takes it as is);
 * - `headers`: sent with every export; the environment's OTEL_EXPORTER_OTLP_HEADERS win per name;
 * - `insecure`: an `https` endpoint's certificate is not verified; gRPC uses insecure credentials;
 * - `protocol`: `grpc`, `http/protobuf` or `http/json`; empty: OTEL_EXPORTER_OTLP_PROTOCOL's;
 * - `timeout`: a duration (`500ms`, `10s`, …), the export timeout;
 * - `localVars`: of the variables, HONOURED_VARS apply (an environment OTEL_SERVICE_NAME wins);
 *   any other is logged once by name, never by value.
 */

export interface AccountTelemetry {
  endpoint: string;
  headers: Record<string, string>;
  insecure: boolean;
  protocol: string;
  timeout: string;
  /** Opened values (a pulled document's). */
  localVars: Record<string, string>;
}

/** The local variables a data plane honours. */
export const HONOURED_VARS: readonly string[] = ['OTEL_SERVICE_NAME', 'OTEL_RESOURCE_ATTRIBUTES', 'OTEL_EXPORTER_OTLP_HEADERS'];

const DURATION = /^([0-9]+)(ns|us|ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A `timeout` duration in ms (at least 1), or undefined for none or a malformed one. */
export const timeoutMsOf = (text: string): number | undefined => {
  const m = DURATION.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? 0);
  return ms > 0 ? Math.max(1, Math.round(ms)) : undefined;
};

const isProtocol = (p: string): p is OtlpProtocol => (OTLP_PROTOCOLS as readonly string[]).includes(p);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): Record<string, string> =>
  isRecord(v) ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};

/** The account's settings a pulled document carries, or undefined when it carries none (an older management plane). */
export const accountTelemetryOf = (doc: ConfigDocument): AccountTelemetry | undefined => {
  const t = doc.dataExports?.telemetry;
  return (
    t && {
      endpoint: t.endpoint,
      headers: strings(t.headers),
      insecure: t.insecure,
      protocol: t.protocol,
      timeout: t.timeout,
      localVars: strings(t.localVars),
    }
  );
};

/** Follows a data plane's export settings: the configuration to start with, then a reconfiguration whenever they change. */
export class DataExports {
  readonly initial: TelemetryConfig;
  #applied: string;
  #target: { reconfigure(cfg: TelemetryConfig): Promise<void> } | undefined;
  readonly #noted = new Set<string>();

  constructor(
    private readonly base: TelemetryConfig,
    identity: AccountTelemetry | undefined,
  ) {
    this.initial = this.effective(identity);
    this.#applied = keyOf(this.initial);
  }

  /** Where reconfigurations go (the data plane's telemetry, started with `initial`). */
  follow(target: { reconfigure(cfg: TelemetryConfig): Promise<void> }): void {
    this.#target = target;
  }

  /** Applies a pulled document's settings when they differ from those applied. */
  async apply(t: AccountTelemetry | undefined): Promise<void> {
    if (!t) return;
    const next = this.effective(t);
    const key = keyOf(next);
    if (key === this.#applied) return;
    this.#applied = key;
    log.info('telemetry exports changed by the management plane', {
      traces: originOf(next.tracesUrl),
      metrics: originOf(next.metrics.url),
      protocol: next.protocol,
    });
    await this.#target?.reconfigure(next);
  }

  /** The configuration `t` gives on top of the environment's. */
  effective(t: AccountTelemetry | undefined): TelemetryConfig {
    const base = this.base;
    if (!t || t.endpoint === '') return base;
    if (base.fromEnv?.endpoint) {
      this.#note('env', 'an OTLP endpoint is set in the environment: the service account’s dataExports.telemetry is not used', {});
      return base;
    }
    const endpoint = t.endpoint.replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]/i.test(endpoint) || !URL.canParse(endpoint)) {
      this.#note('endpoint', 'dataExports.telemetry.endpoint is not an http(s) URL: nothing is exported', {});
      return base;
    }
    let protocol = base.protocol;
    if (isProtocol(t.protocol)) protocol = t.protocol;
    else if (t.protocol !== '')
      this.#note(`protocol-${t.protocol}`, 'dataExports.telemetry.protocol is not grpc, http/protobuf or http/json: the default applies', {
        protocol: t.protocol,
      });
    const timeoutMs = timeoutMsOf(t.timeout);
    if (t.timeout !== '' && timeoutMs === undefined)
      this.#note(`timeout-${t.timeout}`, 'dataExports.telemetry.timeout is not a duration: the default applies', { timeout: t.timeout });
    const vars = this.#vars(t.localVars);
    const signal = (path: string): string => (protocol === 'grpc' ? endpoint : `${endpoint}/${path}`);
    const serviceName = base.fromEnv?.serviceName
      ? base.serviceName
      : (vars.serviceName ?? vars.resource['service.name'] ?? base.serviceName);
    return {
      ...base,
      protocol,
      tracesUrl: signal('v1/traces'),
      headers: { ...t.headers, ...vars.headers, ...base.headers },
      ...(t.insecure ? { insecure: true } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      serviceName,
      resourceAttributes: vars.resource,
      metrics: { ...base.metrics, url: signal('v1/metrics') },
    };
  }

  /** The honoured local variables, parsed; the others (and malformed ones) noted once by name. */
  #vars(localVars: Record<string, string>): {
    serviceName: string | undefined;
    resource: Record<string, string>;
    headers: Record<string, string>;
  } {
    const pairs = (name: string): Record<string, string> => {
      const raw = localVars[name];
      if (raw === undefined) return {};
      try {
        return headerPairs({ description: name }).parse(raw, name);
      } catch {
        this.#note(`malformed-${name}`, 'a telemetry local variable is malformed (name=value pairs, URL-encoded) and is not used', {
          name,
        });
        return {};
      }
    };
    for (const name of Object.keys(localVars)) {
      if (!HONOURED_VARS.includes(name))
        this.#note(`var-${name}`, 'a telemetry local variable is not honoured by the data plane (see docs/observability.md)', {
          name,
          honoured: HONOURED_VARS.join(','),
        });
    }
    const serviceName = localVars.OTEL_SERVICE_NAME?.trim();
    return {
      serviceName: serviceName ? serviceName : undefined,
      resource: pairs('OTEL_RESOURCE_ATTRIBUTES'),
      headers: pairs('OTEL_EXPORTER_OTLP_HEADERS'),
    };
  }

  #note(key: string, msg: string, fields: Record<string, unknown>): void {
    if (this.#noted.has(key)) return;
    this.#noted.add(key);
    log.warn(msg, fields);
  }
}

/** What decides whether two configurations export alike (in memory only: it holds header values). */
const keyOf = (c: TelemetryConfig): string =>
  JSON.stringify([
    c.protocol,
    c.tracesUrl,
    c.metrics.url,
    c.headers,
    c.insecure ?? false,
    c.timeoutMs ?? 0,
    c.serviceName,
    c.resourceAttributes ?? {},
  ]);

/** A URL's origin for a log line (no path, no credentials). */
const originOf = (url: string | undefined): string | undefined => (url && URL.canParse(url) ? new URL(url).origin : undefined);
