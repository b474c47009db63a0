import { decode, encode, ExtensionCodec } from '@msgpack/msgpack';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import controllerProto from '../proto/grpc_controller.proto' with { type: 'text' };
import stdioProto from '../proto/grpc_stdio.proto' with { type: 'text' };
import tfplugin6Proto from '../proto/tfplugin6.proto' with { type: 'text' };

/**
 * The wire of the Terraform plugin protocol: the protobuf definitions (embedded as text, parsed at
 * start so the binary needs no file on disk) and cty values as msgpack (DynamicValue).
 */

const HEALTH_PROTO = `syntax = "proto3"; package grpc.health.v1;
message HealthCheckRequest { string service = 1; }
message HealthCheckResponse { enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; } ServingStatus status = 1; }
service Health { rpc Check(HealthCheckRequest) returns (HealthCheckResponse); }`;

export const loadPackageDefinition = (): protoLoader.PackageDefinition => {
  const root = new protobuf.Root();
  for (const common of ['google/protobuf/empty.proto', 'google/protobuf/timestamp.proto']) {
    const json = protobuf.common.get(common);
    if (json) root.addJSON(json.nested ?? {});
  }
  for (const text of [tfplugin6Proto, controllerProto, stdioProto, HEALTH_PROTO]) protobuf.parse(text, root, { keepCase: true });
  return protoLoader.fromJSON(root.toJSON(), { keepCase: true, longs: Number, enums: Number, defaults: true, oneofs: true });
};

/** A value Terraform does not know yet (msgpack extension 0, or 12 for a refined unknown). */
export class Unknown {
  constructor(
    readonly type: number = 0,
    readonly data: Uint8Array = new Uint8Array([0]),
  ) {}
}
export const UNKNOWN = new Unknown();
export const isUnknown = (v: unknown): v is Unknown => v instanceof Unknown;

const codec = new ExtensionCodec();
// Encoding: every Unknown goes out with its own extension type and bytes (a refined unknown is passed through).
codec.register({
  type: 0,
  encode: (v: unknown) => (v instanceof Unknown && v.type === 0 ? v.data : null),
  decode: (data: Uint8Array) => new Unknown(0, data),
});
codec.register({
  type: 12,
  encode: (v: unknown) => (v instanceof Unknown && v.type === 12 ? v.data : null),
  decode: (data: Uint8Array) => new Unknown(12, data),
});

/** A cty value as decoded: null, string, number, boolean, list, map/object, or Unknown. */
export type Cty = null | string | number | boolean | Unknown | Cty[] | { [k: string]: Cty };
export type CtyObject = { [k: string]: Cty };

export interface DynamicValue {
  msgpack?: Uint8Array | null;
  json?: Uint8Array | null;
}

const normalise = (v: unknown): Cty => {
  if (v === null || v === undefined) return null;
  if (v instanceof Unknown) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(normalise);
  if (v instanceof Map) {
    const o: CtyObject = {};
    for (const [k, x] of v) o[String(k)] = normalise(x);
    return o;
  }
  if (typeof v === 'object') {
    const o: CtyObject = {};
    for (const [k, x] of Object.entries(v)) o[k] = normalise(x);
    return o;
  }
  return null;
};

export const decodeDynamic = (dv: DynamicValue | null | undefined): Cty => {
  if (!dv) return null;
  if (dv.msgpack && dv.msgpack.length > 0) return normalise(decode(dv.msgpack, { extensionCodec: codec }));
  if (dv.json && dv.json.length > 0) return normalise(JSON.parse(Buffer.from(dv.json).toString('utf8')));
  return null;
};

export const encodeDynamic = (v: Cty): DynamicValue => ({ msgpack: encode(v, { extensionCodec: codec, ignoreUndefined: false }) });
