import { type TObject, Type as t } from '@sinclair/typebox';
import { CustomerRef, Enum, ProjectRef, Str } from '../../src/api/kit.ts';
import { BYOK_PROVIDER_NAMES } from '../../src/core/byok.ts';

/**
 * TEMPORARY (issue 23, item 1): the request schemas of operations the provider reads whose specs
 * are not in src/api/ops yet — byok.v1.ByokService `Register` (gateway_byok_key), being moved
 * there on another branch. Written here, not read from the server's handlers, so that the provider
 * loads no control-plane code meanwhile. test/api-ops-bound.test.ts checks that each equals the
 * schema the server mounts, and fails once OPS declares the operation: then delete this file and
 * its use in api-schemas.ts.
 */
export const PENDING_INPUTS: Readonly<Record<string, TObject>> = {
  Register: t.Object(
    {
      provider: Enum(BYOK_PROVIDER_NAMES, `one of ${BYOK_PROVIDER_NAMES.join(', ')} (PROVIDER_UNSPECIFIED is refused)`),
      name: Str(1, 255, { description: 'operator label (1-255)' }),
      secret: Str(1, 16384, { description: 'plaintext provider key; wrapped immediately, never returned except by Fetch' }),
      userScope: t.Optional(t.Boolean({ description: 'default false' })),
      customerId: t.Optional(CustomerRef()),
      projectId: t.Optional(ProjectRef()),
    },
    { additionalProperties: false },
  ),
};
