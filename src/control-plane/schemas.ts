import { type TLiteral, type TSchema, type TUnion, Type } from '@sinclair/typebox';
import { t } from 'elysia';

/**
 * Named patterns, bounds and shared shapes of the management API, written once. Request schemas
 * validate (Elysia, strict); response schemas document (OpenAPI) and are checked by the tests.
 *
 * Integers use TypeBox's `Type.Integer`, not Elysia's `t.Integer`: the latter silently coerces
 * `"5"` to 5, while an int32 field of the seed takes a JSON number only. `int64` fields take a
 * number or a digit string (see `Int64`).
 */
export const PATTERNS = {
  UUID: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  SLUG: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$',
  ID: '^[a-zA-Z0-9-_.]+$',
  PROJ: '^[a-z0-9]([a-z0-9-_.]*[a-z0-9])?$',
  SERVER: '^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$',
  SCOPE: '^[a-z_]+$',
} as const;

interface StrOpts {
  pattern?: string;
  description?: string;
  format?: string;
}

/** A string of length [min, max]. */
export const Str = (min: number, max: number, o: StrOpts = {}) =>
  t.String({ ...(min > 0 ? { minLength: min } : {}), maxLength: max, ...o });
/** Optional and nullable (the seed's 'nullable'): omitted or null leaves a stored value unchanged. */
export const Nullable = <T extends TSchema>(s: T, description?: string) => t.Optional(t.Union([s, t.Null()], description ? { description } : {}));
type Literals<V extends readonly string[]> = { -readonly [K in keyof V]: TLiteral<V[K]> };
export const Enum = <const V extends readonly string[]>(values: V, description?: string): TUnion<Literals<V>> =>
  t.Union(values.map((v) => t.Literal(v)), { description: description ?? `one of: ${values.join(', ')}` }) as unknown as TUnion<Literals<V>>;

export const Uuid = (description = 'UUID') => t.String({ pattern: PATTERNS.UUID, description });
export const CustomerSlug = () => Str(1, 63, { pattern: PATTERNS.SLUG, description: 'customer slug (SLUG, 1-63)' });
export const CustomerRef = () => Str(1, 63, { description: 'customer slug (1-63)' });
export const ProjectSlug = () => Str(1, 253, { pattern: PATTERNS.PROJ, description: 'project slug (PROJ, 1-253), unique within the customer' });
/** A required project reference (the seed's projectId [1,253] of project and assignment operations). */
export const ProjectKey = () => Str(1, 253, { description: "project slug (1-253); 'default' is the default project" });
/** An optional project reference; empty or 'default' means the default project. */
export const ProjectRef = (max = 253) => Str(0, max, { description: "project slug; empty or 'default' means the default project" });
export const Name = () => Nullable(Str(0, 255), 'display name (0-255)');
export const Description = () => Nullable(Str(0, 1000), 'description (0-1000)');
export const LABEL_KEY = '^[\\s\\S]{1,255}$';
/** A string→string map: at most 50 entries, keys 1-255 characters, values at most 255. */
export const StringMap = (description: string) =>
  t.Record(t.String({ pattern: LABEL_KEY }), Str(0, 255), { maxProperties: 50, additionalProperties: false, description });
export const Labels = () =>
  t.Optional(StringMap('labels: at most 50 entries; keys 1-255 characters, values at most 255; on an update the given map replaces the whole set'));
export const Url = (min: number, description: string) => Str(min, 2048, { description });

/** int32: a JSON integer (a string is rejected). */
export const Int32 = (o: { minimum?: number; maximum?: number; description?: string } = {}) =>
  Type.Integer({ minimum: o.minimum ?? -2_147_483_648, maximum: o.maximum ?? 2_147_483_647, ...(o.description ? { description: o.description } : {}) });

/**
 * int64: a JSON integer or a string of digits. Strings are turned into numbers before validation
 * (see connect.ts), so bounds apply to both spellings; output int64 values are strings.
 */
export const Int64 = (o: { minimum?: number; maximum?: number; description?: string } = {}) =>
  t.Union([Type.Integer({ ...(o.minimum !== undefined ? { minimum: o.minimum } : {}), ...(o.maximum !== undefined ? { maximum: o.maximum } : {}) }), t.String({ pattern: '^-?[0-9]{1,19}$' })], {
    description: o.description ?? 'int64 as a number or a string of digits',
    int64: true,
  });

export const int64Value = (v: number | string): number => (typeof v === 'number' ? v : Number(v));

export const PageSize = () => t.Optional(Int32({ minimum: 0, maximum: 1000, description: 'int32 0..1000; 0 = server default (50)' }));
export const PageToken = () => t.Optional(Str(0, 512, { description: 'opaque token from nextPageToken' }));

/** The default project's slug; an empty projectId means it. */
export const DEFAULT_PROJECT = 'default';
export const projectOrDefault = (p: string | null | undefined): string => (p === undefined || p === null || p === '' ? DEFAULT_PROJECT : p);

// ---- response shapes --------------------------------------------------------------------------

export const Timestamp = (description = 'RFC 3339 UTC timestamp') => t.String({ format: 'date-time', description });
export const OptTimestamp = (description = 'RFC 3339 UTC timestamp; absent while unset') => t.Optional(Timestamp(description));
export const LabelsOut = () => t.Record(t.String(), t.String());
export const ts = (d: Date): string => d.toISOString();
export const optTs = (d: Date | null | undefined): string | undefined => (d ? d.toISOString() : undefined);

export const Deleted = () => t.Object({ deletedAt: Timestamp('when the soft delete happened'), success: t.Boolean() });
export const Success = () => t.Object({ success: t.Boolean() });
export const Warnings = () => t.Array(t.String(), { description: 'non-fatal advisories; empty when fully functional' });

/** `{ [name]: schema }`: the single-resource envelope (`{customer}`, `{project}`, …). */
export const One = <K extends string, S extends TSchema>(name: K, schema: S) => t.Object({ [name]: schema } as { [P in K]: S });
/** `{ [name]: schema[], nextPageToken }`: a page of a list. */
export const Page = <K extends string, S extends TSchema>(name: K, schema: S) =>
  t.Object({ ...({ [name]: t.Array(schema) } as { [P in K]: ReturnType<typeof t.Array<S>> }), nextPageToken: t.String({ description: 'empty when exhausted' }) });
