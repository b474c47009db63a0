import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * OTLP transport choice (OTEL_EXPORTER_OTLP_PROTOCOL): `grpc`, `http/protobuf` or `http/json`.
 * Every exporter package is loaded by dynamic import, and only the one the protocol names.
 */

import { OTLP_PROTOCOLS, type OtlpProtocol } from '../config/setting-kinds.ts';

export { OTLP_PROTOCOLS, type OtlpProtocol };

/** gRPC metadata from header pairs (keys lower-cased, as gRPC requires). */
export const grpcMetadata = async (headers: Record<string, string>) => {
  const { createEmptyMetadata } = await import('@opentelemetry/otlp-grpc-exporter-base');
  const md = createEmptyMetadata();
  for (const [k, v] of Object.entries(headers)) md.set(k.toLowerCase(), v);
  return md;
};

/** How an export is sent, whatever its protocol. */
export interface ExportOptions {
  /** Sent with every export (gRPC: as metadata). */
  headers: Record<string, string>;
  /** An `https` endpoint's certificate is not verified; gRPC uses insecure (plaintext) credentials. */
  insecure?: boolean;
  /** Export timeout; unset: the exporter's default (10 s). */
  timeoutMs?: number;
}

/** The gRPC exporter options of `o` (credentials only when insecure: otherwise chosen by the URL's scheme). */
export const grpcOptions = async (url: string, o: ExportOptions) => {
  const { createInsecureCredentials } = await import('@opentelemetry/otlp-grpc-exporter-base');
  return {
    url,
    metadata: await grpcMetadata(o.headers),
    ...(o.insecure ? { credentials: createInsecureCredentials() } : {}),
    ...(o.timeoutMs ? { timeoutMillis: o.timeoutMs } : {}),
  };
};

/** The HTTP exporter options of `o`. */
export const httpOptions = (url: string, o: ExportOptions) => ({
  url,
  headers: o.headers,
  ...(o.timeoutMs ? { timeoutMillis: o.timeoutMs } : {}),
  ...(o.insecure && url.startsWith('https:') ? { httpAgentOptions: { rejectUnauthorized: false } } : {}),
});

/** The span exporter of a protocol, sending to `url` (a full `…/v1/traces` URL for HTTP, the collector's address for gRPC). */
export const spanExporter = async (protocol: OtlpProtocol, url: string, o: ExportOptions): Promise<SpanExporter> => {
  if (protocol === 'grpc') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
    return new OTLPTraceExporter(await grpcOptions(url, o));
  }
  if (protocol === 'http/protobuf') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
    return new OTLPTraceExporter(httpOptions(url, o));
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter(httpOptions(url, o));
};
