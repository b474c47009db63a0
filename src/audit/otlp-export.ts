import type { TelemetryConfigRow } from '../store/schema/index.ts';
import { authHeaders, postOtlp, SEND_TIMEOUT_MS, type SendResult, type Signal, type SinkAuth, signalUrl } from './otlp.ts';

/**
 * One forwarded batch on the wire, in the config's protocol: OTLP/HTTP with a JSON or a protobuf
 * body (`{sinkUrl}/v1/{signal}`), or OTLP/gRPC (the signal's `Export` method at the sink's
 * host:port, TLS for an `https://` sinkUrl). The config's auth goes as HTTP headers, or as gRPC
 * metadata. A failure is told in words (status code, gRPC status or kind of network error), never
 * with the sink's own text.
 */

export type ForwardProtocol = 'http/json' | 'http/protobuf' | 'grpc';

/** A batch's OTLP export request, encodable both ways (the OpenTelemetry serializers). */
export interface OtlpExport {
  json(): Uint8Array | string;
  /** Undefined when the type forwards as JSON only (audit_logs). */
  protobuf(): Uint8Array | undefined;
}

/** A position in a source's order. */
export interface Cursor {
  ts: Date;
  id: string;
}

/** What a telemetry type forwards: its items after a cursor, in cursor order, and their OTLP export. */
export interface ForwardSource<T> {
  /** Whether an item after the cursor is old enough to forward (a read). */
  pending(after: Cursor): Promise<boolean>;
  /** The next items after the cursor, old enough, at most `limit`. */
  next(after: Cursor, limit: number): Promise<T[]>;
  cursorOf(item: T): Cursor;
  /** The export of a batch; `from` is the cursor before it (the start of a metrics delta). */
  export(items: readonly T[], from: Cursor): Promise<OtlpExport>;
  /** The OTLP signal its exports are. */
  signal: Signal;
  /** Protocols the type forwards in (audit_logs: http/json only). */
  protocols: readonly string[];
  /** The next attempt after a drain that sent everything, in ms (audit: the config's interval; records: the next tick). */
  intervalMs(cfg: TelemetryConfigRow): number;
}

const GRPC_METHODS: Readonly<Record<Signal, string>> = {
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
};

/** Where the export connects: the signal's URL over HTTP, the sink URL itself over gRPC. */
export const exportUrl = (sinkUrl: string, protocol: string, signal: Signal): string =>
  protocol === 'grpc' ? sinkUrl : signalUrl(sinkUrl, signal);

/** The export's body in the protocol (undefined when the type has no such encoding). */
export const encodeExport = (payload: OtlpExport, protocol: string): Uint8Array | string | undefined =>
  protocol === 'http/json' ? payload.json() : payload.protobuf();

/** Its size in bytes (a batch past the sink's usual message limit is split). */
export const encodedBytes = (body: Uint8Array | string): number => (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);

/** The gRPC target of a sink URL: `host:port` (80 / 443 when the URL names none). */
const grpcTarget = (u: URL): string => (u.port ? u.host : `${u.host}:${u.protocol === 'https:' ? 443 : 80}`);

const sendGrpc = async (sinkUrl: string, signal: Signal, auth: SinkAuth, body: Uint8Array, timeoutMs: number): Promise<SendResult> => {
  const grpc = await import('@grpc/grpc-js');
  const u = new URL(sinkUrl);
  const client = new grpc.Client(grpcTarget(u), u.protocol === 'https:' ? grpc.credentials.createSsl() : grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(authHeaders(auth))) metadata.set(k.toLowerCase(), v);
  try {
    return await new Promise<SendResult>((resolve) => {
      client.makeUnaryRequest(
        GRPC_METHODS[signal],
        (b: Uint8Array) => Buffer.from(b),
        (b: Buffer) => b,
        body,
        metadata,
        { deadline: Date.now() + timeoutMs },
        (err) => {
          if (!err) return resolve({ ok: true, message: '' });
          if (err.code === grpc.status.DEADLINE_EXCEEDED)
            return resolve({ ok: false, message: `the sink did not answer within ${timeoutMs} ms` });
          if (err.code === grpc.status.UNAVAILABLE) return resolve({ ok: false, message: 'cannot reach the sink (gRPC UNAVAILABLE)' });
          resolve({ ok: false, message: `the sink answered gRPC status ${err.code} (${grpc.status[err.code] ?? 'unknown'})` });
        },
      );
    });
  } finally {
    client.close();
  }
};

/** Sends an encoded export; ok only when the sink accepted it (HTTP 2xx, gRPC OK). */
export const sendExport = (
  sinkUrl: string,
  protocol: string,
  signal: Signal,
  auth: SinkAuth,
  body: Uint8Array | string,
  timeoutMs = SEND_TIMEOUT_MS,
): Promise<SendResult> => {
  if (protocol === 'grpc') return sendGrpc(sinkUrl, signal, auth, typeof body === 'string' ? Buffer.from(body) : body, timeoutMs);
  return postOtlp(
    signalUrl(sinkUrl, signal),
    auth,
    body,
    protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
    timeoutMs,
  );
};
