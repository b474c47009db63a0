import type { ConfigDocument } from '../api/config-document.ts';
import { describeError, log } from '../core/log.ts';
import type { ServiceAccountRow } from '../store/schema/index.ts';
import type { ControlDeps } from './deps.ts';
import { resolveSecretRef } from './secret-refs.ts';

/**
 * The `dataExports` of a separate data plane's document: where the pulling service account says its
 * data plane exports traces and OTLP metrics (CreateServiceAccount's telemetry* fields, stored in
 * `service_accounts.telemetry`). Local variables are stored as internal secret references; they are
 * opened here, to travel sealed for the account (propagation/seal.ts) like every document secret.
 * A reference that no longer opens is left out and logged by name (never a value).
 */
export const dataExportsOf = async (deps: ControlDeps, a: ServiceAccountRow): Promise<NonNullable<ConfigDocument['dataExports']>> => {
  const t = a.telemetry;
  const localVars: Record<string, string> = {};
  for (const [name, ref] of Object.entries(t.localVars ?? {})) {
    try {
      localVars[name] = await resolveSecretRef(deps.db, deps.secrets, a.customerId, ref, `telemetryLocalVars.${name}`);
    } catch (e) {
      log.every(
        `dataplane-export-var-${a.id}-${name}`,
        'warn',
        "a service account's telemetry local variable could not be opened; left out",
        { serviceAccount: a.id, name, error: describeError(e) },
        300_000,
      );
    }
  }
  return {
    telemetry: {
      endpoint: t.endpoint ?? '',
      headers: t.headers ?? {},
      insecure: t.insecure ?? false,
      protocol: t.protocol ?? '',
      timeout: t.timeout ?? '',
      localVars,
    },
  };
};
