import type { TlsFiles } from '../core/tls.ts';
import type { OtlpProtocol } from './setting-kinds.ts';

/** What the telemetry (src/telemetry) is started with, as the settings declare it (env.ts). */

export interface MetricsConfig {
  /** Port of the metrics listener; 0: none. */
  port: number;
  host: string;
  /** GATEWAY_METRICS_TLS_*: serve /metrics over HTTPS. */
  tls?: TlsFiles;
  /** GATEWAY_METRICS_TENANT_LABELS: the `project` label names the customer and project; false: it is TENANTS_HIDDEN on every series. */
  tenantLabels: boolean;
  /** OTLP metrics URL (`…/v1/metrics` for HTTP, the collector's address for gRPC), or undefined for no export. */
  url: string | undefined;
  intervalMs: number;
}

export interface TelemetryConfig {
  protocol: OtlpProtocol;
  /** Traces URL (`…/v1/traces` for HTTP, the collector's address for gRPC), or undefined for no export. */
  tracesUrl: string | undefined;
  headers: Record<string, string>;
  /** `https` endpoints: no certificate verification; gRPC: insecure credentials (a data plane's `dataExports.telemetry.insecure`). */
  insecure?: boolean;
  /** Export timeout (a data plane's `dataExports.telemetry.timeout`); unset: the exporter's default. */
  timeoutMs?: number;
  serviceName: string;
  /** Resource attributes besides `service.name` and `service.version` (a data plane's OTEL_RESOURCE_ATTRIBUTES local variable). */
  resourceAttributes?: Record<string, string>;
  /** Which OTEL_* variables the process environment set (they win over a data plane's `dataExports.telemetry`). */
  fromEnv?: { endpoint: boolean; serviceName: boolean };
  /** Request headers copied onto spans as `gateway.header.<name>` (session, user, workflow ids). */
  spanHeaders: readonly string[];
  metrics: MetricsConfig;
}
