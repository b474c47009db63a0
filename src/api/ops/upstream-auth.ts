import { Type as t, type TSchema } from '@sinclair/typebox';
import { Description, Enum, Labels, Nullable, Str } from '../kit.ts';
import { MCP_AUTH_TYPES } from '../mcp-rules.ts';
import type { SecretForms, TfArg } from '../resource.ts';

/**
 * The credential a catalog entry sends upstream, declared once for the catalogs that have one (an
 * MCP server's, mcp.ts; an A2A agent's, a2a.ts): its request fields, its response fields, its
 * document fields and its Terraform arguments. The rules across them are in ../mcp-rules.ts.
 */

const AuthHeader = () =>
  Str(1, 255, { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", description: "header name for authType 'header' (an HTTP token, 1-255)" });
/** The credential itself (`description` says what it is sent to). */
export const UpstreamAuthValue = (description: string) => Str(1, 16384, { description });

/** The request fields after the entry's own: its description, the credential (`authValue`: UpstreamAuthValue), and its labels. */
export const upstreamAuthFields = <V extends TSchema>(authValue: V) => ({
  description: Description(),
  authType: t.Optional(
    Enum(MCP_AUTH_TYPES, "'none' (default), 'bearer' (Authorization: Bearer <authValue>) or 'header' (<authHeader>: <authValue>)"),
  ),
  authHeader: Nullable(AuthHeader(), "header name for authType 'header'"),
  authValue: Nullable(authValue, 'the credential; secret: wrapped at rest, never returned'),
  labels: Labels(),
});

/** The response fields that say how the entry authenticates (the credential is never returned). */
export const upstreamAuthOut = () => ({
  authType: t.String(),
  authHeader: t.String({ description: "empty unless authType is 'header'" }),
  hasAuthValue: t.Boolean({ description: 'whether a credential is stored (it is never returned)' }),
});

/** The document row's fields for the credential (sealed like every secret) and the private-address allowance. */
export const upstreamAuthRow = <T extends TSchema, J extends TSchema>(secret: SecretForms<T, J>) => ({
  authType: t.String(),
  authHeader: t.Union([t.String(), t.Null()]),
  authValue: t.Union([secret.text, t.Null()]),
  allowPrivate: t.Boolean(),
});

/** The Terraform arguments of the fields of `upstreamAuthFields`. */
export const upstreamAuthArgs = (): TfArg[] => [
  { api: 'description', update: true },
  { api: 'authType', update: true },
  { api: 'authHeader', update: true },
  { api: 'labels', update: true },
  {
    api: 'authValue',
    update: true,
    optionalComputed: false,
    sensitive: true,
    keep: true,
    writeOnlyForm: true,
    description:
      'the credential (bearer token or header value); kept in state as given, never read back (an out-of-band change is not detected)',
  },
];
