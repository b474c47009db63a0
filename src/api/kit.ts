import { FormatRegistry, type TLiteral, type TSchema, type TUnion, Type, Type as t } from '@sinclair/typebox';
import { connectError } from '../core/errors.ts';
import { MODEL_ID_MAX, MODEL_ID_PATTERN } from '../governance/setting-values.ts';

/**
 * Named patterns, bounds and shared shapes of the management API, written once (src/api: no
 * server, no store — the Terraform provider, the typed client and the handlers all read these). Request schemas
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
  /** Model ids: printable ASCII letters, digits and `-_.:/@+` (see setting-values.ts). */
  MODEL: MODEL_ID_PATTERN,
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
export const Nullable = <T extends TSchema>(s: T, description?: string) =>
  t.Optional(t.Union([s, t.Null()], description ? { description } : {}));
type Literals<V extends readonly string[]> = { -readonly [K in keyof V]: TLiteral<V[K]> };
export const Enum = <const V extends readonly string[]>(values: V, description?: string): TUnion<Literals<V>> =>
  t.Union(
    values.map((v) => t.Literal(v)),
    { description: description ?? `one of: ${values.join(', ')}` },
  ) as unknown as TUnion<Literals<V>>;

export const Uuid = (description = 'UUID') => t.String({ pattern: PATTERNS.UUID, description });
export const CustomerSlug = () => Str(1, 63, { pattern: PATTERNS.SLUG, description: 'customer slug (SLUG, 1-63)' });
export const CustomerRef = () => Str(1, 63, { description: 'customer slug (1-63)' });
export const ProjectSlug = () =>
  Str(1, 253, { pattern: PATTERNS.PROJ, description: 'project slug (PROJ, 1-253), unique within the customer' });
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
  t.Optional(
    StringMap('labels: at most 50 entries; keys 1-255 characters, values at most 255; on an update the given map replaces the whole set'),
  );
export const Url = (min: number, description: string) => Str(min, 2048, { description });
/**
 * A model id (catalog, route and route-target `model`): 1-253 characters from printable ASCII
 * letters, digits and `- _ . : / @ +`. Refuses whitespace, control and invisible characters
 * (zero-width, bidi controls) and non-Latin letters, so two names cannot look alike yet differ.
 */
export const ModelId = (description: string) =>
  t.String({
    minLength: 1,
    maxLength: MODEL_ID_MAX,
    pattern: PATTERNS.MODEL,
    description: `${description}; letters, digits and - _ . : / @ + (1-${MODEL_ID_MAX})`,
  });

/** int32: a JSON integer (a string is rejected). */
export const Int32 = (o: { minimum?: number; maximum?: number; description?: string } = {}) =>
  Type.Integer({
    minimum: o.minimum ?? -2_147_483_648,
    maximum: o.maximum ?? 2_147_483_647,
    ...(o.description ? { description: o.description } : {}),
  });

/**
 * int64: a JSON integer or a string of digits. Strings are turned into numbers before validation
 * (see connect.ts), so bounds apply to both spellings; output int64 values are strings.
 */
export const Int64 = (o: { minimum?: number; maximum?: number; description?: string } = {}) =>
  t.Union(
    [
      Type.Integer({
        ...(o.minimum !== undefined ? { minimum: o.minimum } : {}),
        ...(o.maximum !== undefined ? { maximum: o.maximum } : {}),
      }),
      t.String({ pattern: '^-?[0-9]{1,19}$' }),
    ],
    {
      description: o.description ?? 'int64 as a number or a string of digits',
      int64: true,
    },
  );

export const int64Value = (v: number | string): number => (typeof v === 'number' ? v : Number(v));

export const PageSize = () => t.Optional(Int32({ minimum: 0, maximum: 1000, description: 'int32 0..1000; 0 = server default (50)' }));
export const PageToken = () => t.Optional(Str(0, 512, { description: 'opaque token from nextPageToken' }));

/** The default project's slug; an empty projectId means it. */
export const DEFAULT_PROJECT = 'default';
export const projectOrDefault = (p: string | null | undefined): string => (p === undefined || p === null || p === '' ? DEFAULT_PROJECT : p);

// ---- timestamps (input) -------------------------------------------------------------------------

/** RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `T`/`Z` in either case. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysIn = (year: number, month: number): number => (month === 2 && leap(year) ? 29 : (DAYS[month - 1] ?? 0));

/**
 * The instant an RFC 3339 time names, or undefined when it is not one or lies outside years
 * 0001..9999 — the range both PostgreSQL `timestamptz` and JavaScript `Date` hold (and the only
 * one RFC 3339's four-digit year can spell). Strict: no day 31 of a 30-day month, no hour 24.
 */
export const timestampOf = (v: string): Date | undefined => {
  const m = RFC3339.exec(v);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59)
    return undefined;
  const offHours = m[10] === undefined ? 0 : Number(m[10]);
  const offMinutes = m[11] === undefined ? 0 : Number(m[11]);
  if (offHours > 23 || offMinutes > 59) return undefined;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)));
  const offset = (m[9] === '-' ? -1 : 1) * (offHours * 60 + offMinutes) * 60_000;
  return new Date(d.getTime() - offset);
};

FormatRegistry.Set('rfc3339', (v) => timestampOf(v) !== undefined);
// Response timestamps: registered here too so that the schemas check without Elysia loaded (the client, the provider).
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)));

/** A timestamp input: RFC 3339, years 0001..9999 (see `timestampOf`); parse it with `parseTimestamp`. */
export const TimestampIn = (description: string) =>
  t.String({ format: 'rfc3339', maxLength: 40, description: `${description}; RFC 3339 (e.g. 2026-01-02T03:04:05Z), years 0001-9999` });

/** A validated timestamp input as a Date; anything else is `invalid_argument` naming `field`. */
export const parseTimestamp = (v: string, field: string): Date => {
  const d = timestampOf(v);
  if (!d) throw connectError('invalid_argument', `invalid field '${field}': not an RFC 3339 time in years 0001-9999`, field);
  return d;
};

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
  t.Object({
    ...({ [name]: t.Array(schema) } as { [P in K]: ReturnType<typeof t.Array<S>> }),
    nextPageToken: t.String({ description: 'empty when exhausted' }),
  });
