import { t } from 'elysia';

/** Named patterns and bounds of the management seed, written once. */
export const PATTERNS = {
  UUID: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  SLUG: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$',
  ID: '^[a-zA-Z0-9-_.]+$',
  PROJ: '^[a-z0-9]([a-z0-9-_.]*[a-z0-9])?$',
  SERVER: '^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$',
  SCOPE: '^[a-z_]+$',
} as const;

export const Uuid = (description = 'UUID') => t.String({ pattern: PATTERNS.UUID, description });
export const CustomerSlug = () => t.String({ minLength: 1, maxLength: 63, pattern: PATTERNS.SLUG, description: 'customer slug (SLUG, 1-63)' });
export const CustomerRef = () => t.String({ minLength: 1, maxLength: 63, description: 'customer slug' });
export const ProjectSlug = () => t.String({ minLength: 1, maxLength: 253, pattern: PATTERNS.PROJ, description: 'project slug (PROJ, 1-253)' });
/** A project reference; empty means the default project. */
export const ProjectRef = () => t.String({ maxLength: 253, description: "project slug; empty or 'default' means the default project" });
export const Name = () => t.Optional(t.Union([t.String({ maxLength: 255 }), t.Null()]));
export const Description = () => t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()]));
export const Labels = () =>
  t.Optional(
    t.Record(t.String({ maxLength: 63 }), t.String({ maxLength: 255 }), {
      maxProperties: 50,
      description: 'labels: at most 50 entries, values at most 255 characters',
    }),
  );
export const PageSize = () => t.Optional(t.Integer({ minimum: 0, maximum: 1000, description: '0 = server default (50); at most 1000' }));
export const PageToken = () => t.Optional(t.String({ maxLength: 512, description: 'opaque token from nextPageToken' }));
/** `int64`: a JSON integer or a string of digits. */
export const Int64 = (opts: { minimum?: number; maximum?: number; description?: string } = {}) =>
  t.Union([t.Integer(opts), t.String({ pattern: '^-?[0-9]+$', maxLength: 20 })], { description: opts.description ?? 'int64 as number or string' });

export const int64Value = (v: number | string): number => (typeof v === 'number' ? v : Number(v));

/** The default project's slug; an empty projectId means it. */
export const DEFAULT_PROJECT = 'default';
export const projectOrDefault = (p: string | null | undefined): string => (p === undefined || p === null || p === '' ? DEFAULT_PROJECT : p);

export const ts = (d: Date | null | undefined): string | undefined => (d ? d.toISOString() : undefined);
