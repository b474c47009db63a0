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

/** The span exporter of a protocol, sending to `url` (a full `…/v1/traces` URL for HTTP, the collector's address for gRPC). */
export const spanExporter = async (protocol: OtlpProtocol, url: string, headers: Record<string, string>): Promise<SpanExporter> => {
  if (protocol === 'grpc') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
    return new OTLPTraceExporter({ url, metadata: await grpcMetadata(headers) });
  }
  if (protocol === 'http/protobuf') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
    return new OTLPTraceExporter({ url, headers });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter({ url, headers });
};
