import type { ResourceDef } from './resource.ts';
import { byId } from './resources.ts';
import { computed, field } from './schema.ts';

/**
 * gateway_telemetry_config: a telemetry forwarding config (the seed's TelemetryForwardingConfig).
 * `auth_value` is sensitive and kept in state as given (UpdateTelemetryConfig does not return it,
 * so an out-of-band change of the secret alone is not detected — as for connection keys);
 * `status` is the forwarder's, read only.
 */
const C = 'CreateTelemetryConfig';
const U = 'UpdateTelemetryConfig';

export const telemetryConfig: ResourceDef = byId({
  type: 'gateway_telemetry_config',
  description: 'A telemetry forwarding config (OTLP sink); type audit_logs forwards the audit log.',
  create: C,
  get: 'GetTelemetryConfig',
  update: U,
  del: 'DeleteTelemetryConfig',
  envelope: 'config',
  idField: 'id',
  fields: [
    field(C, 'userId'),
    field(C, 'telemetryType'),
    field(C, 'sinkUrl', { update: U }),
    field(C, 'protocol', { update: U }),
    field(C, 'authType', { update: U }),
    field(C, 'authValue', { update: U, optionalComputed: false, sensitive: true, keep: true }),
    field(C, 'apiKeyHeader', { update: U }),
    field(C, 'enabled', { update: U }),
    field(C, 'forwardIntervalSeconds', { update: U }),
    computed('status', 'status', 'string', 'connected, disconnected, error or testing (set by the forwarder)'),
  ],
});
