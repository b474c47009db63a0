import { parseDuration } from './duration.ts';

/**
 * The kinds of environment settings: how a value is written, checked and turned into what the
 * gateway uses. Each kind carries its rules as plain data too (type, default, unit, bounds,
 * allowed values), so the same declaration drives start-up validation, the settings table in
 * docs/reference/settings.md and, the Helm chart's values. Nothing here reads the environment.
 */

/** A bad setting: start-up stops with one line naming it. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

export type SettingType = 'text' | 'url' | 'port' | 'integer' | 'duration' | 'size' | 'flag' | 'enum' | 'list' | 'key' | 'headers';

/** A setting as plain data. */
export interface SettingSpec {
  readonly type: SettingType;
  readonly description: string;
  /** The default as it would be written in the environment; absent when unset means "none". */
  readonly default?: string;
  /** What an unset value means when that is not a literal default ("generated on first start"). */
  readonly unset?: string;
  /** Unit of a plain number (durations and sizes carry theirs in the value: `10s`, `32MiB`). */
  readonly unit?: string;
  /** Bounds as written in the environment (`1MiB`, `255s`, `1`). */
  readonly min?: string;
  readonly max?: string;
  /** The only values accepted (enums, flags). */
  readonly values?: readonly string[];
  /** URL schemes accepted. */
  readonly schemes?: readonly string[];
  /** Holds a secret: an error message never repeats the value. */
  readonly secret?: boolean;
  /** Read by the Bun runtime itself at process start; the gateway only validates it. */
  readonly readBy?: 'bun';
}

export interface Setting<T> extends SettingSpec {
  /** `raw` is undefined when the variable is unset or empty (an empty list is kept as ''). */
  parse(raw: string | undefined, name: string): T;
}

export type ValueOf<S> = S extends Setting<infer T> ? T : never;

interface Common {
  readonly description: string;
  readonly secret?: boolean;
  readonly readBy?: 'bun';
  readonly unset?: string;
}

const shown = (spec: SettingSpec, raw: string): string => (spec.secret ? 'the value' : `'${raw}'`);

export const text = (o: Common & { default: string }): Setting<string> => ({ type: 'text', ...o, parse: (raw) => raw ?? o.default });

export const optionalText = (o: Common): Setting<string | undefined> => ({ type: 'text', ...o, parse: (raw) => raw });

/** A URL of one of `schemes`; only its scheme is checked (drivers parse the rest). */
export const url = (o: Common & { schemes: readonly string[]; parseable?: boolean }): Setting<string | undefined> => {
  const { parseable, ...rest } = o;
  const spec: SettingSpec = { type: 'url', ...rest };
  return {
    ...spec,
    parse(raw, name) {
      if (raw === undefined) return undefined;
      const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1]?.toLowerCase();
      if (!scheme || !o.schemes.includes(scheme))
        throw new ConfigError(name, `must start with ${o.schemes.map((s) => `${s}://`).join(' or ')}`);
      if (parseable && !URL.canParse(raw)) throw new ConfigError(name, `${shown(spec, raw)} is not a URL`);
      return raw;
    },
  };
};

export const port = (o: Common & { default: string }): Setting<number> => ({
  type: 'port',
  ...o,
  min: '0',
  max: '65535',
  parse(raw, name) {
    const v = raw ?? o.default;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(name, `'${v}' is not a port number (0-65535)`);
    return n;
  },
});

export const integer = (o: Common & { default: string; min: number; max?: number; unit?: string }): Setting<number> => {
  const { min, max, ...spec } = o;
  return {
    type: 'integer',
    ...spec,
    min: String(min),
    ...(max === undefined ? {} : { max: String(max) }),
    parse(raw, name) {
      const v = raw ?? o.default;
      const n = Number(v);
      if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
        const range =
          max === undefined ? (min === 1 ? 'a positive integer' : `an integer of at least ${min}`) : `an integer from ${min} to ${max}`;
        throw new ConfigError(name, `'${v}' is not ${range}`);
      }
      return n;
    },
  };
};

/** An integer that may be left unset (`unset` says what that means); a value is checked as `integer` checks it. */
export const optionalInteger = (o: Common & { unset: string; min: number; max?: number; unit?: string }): Setting<number | undefined> => {
  const { default: _none, parse, ...spec } = integer({ ...o, default: '' });
  return { ...spec, parse: (raw, name) => (raw === undefined ? undefined : parse(raw, name)) };
};

/** Durations: `250ms`, `10s`, `5m`, `1h`, `30d` (milliseconds); always longer than zero. */
export const duration = (o: Common & { default: string; max?: string }): Setting<number> => {
  const maxMs = o.max === undefined ? undefined : parseDuration(o.max);
  return {
    type: 'duration',
    ...o,
    parse(raw, name) {
      const v = raw ?? o.default;
      const ms = parseDuration(v);
      if (ms === null || ms <= 0) throw new ConfigError(name, `'${v}' is not a duration (examples: 250ms, 10s, 5m)`);
      if (maxMs != null && ms > maxMs) throw new ConfigError(name, `'${v}' is longer than ${o.max}`);
      return ms;
    },
  };
};

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** Byte sizes `1048576`, `512KiB`, `32MiB`, `1GB`; null when malformed. */
export const parseSize = (text: string): number | null => {
  const m = /^(\d+)\s*([kmg]i?b|b)?$/i.exec(text.trim());
  const bytes = m ? Number(m[1]) * (SIZE_UNITS[(m[2] ?? '').toLowerCase()] ?? Number.NaN) : Number.NaN;
  return Number.isSafeInteger(bytes) && bytes >= 1 ? bytes : null;
};

/** Sizes in bytes (`65536`, `512KiB`, `32MiB`). */
export const size = (o: Common & { default: string; min?: string; max?: string }): Setting<number> => {
  const lo = o.min === undefined ? 1 : (parseSize(o.min) ?? 1);
  const hi = o.max === undefined ? Number.MAX_SAFE_INTEGER : (parseSize(o.max) ?? Number.MAX_SAFE_INTEGER);
  return {
    type: 'size',
    ...o,
    parse(raw, name) {
      const v = raw ?? o.default;
      const bytes = parseSize(v);
      if (bytes === null) throw new ConfigError(name, `'${v}' is not a size (examples: 65536, 512KiB, 32MiB)`);
      if (bytes < lo || bytes > hi) throw new ConfigError(name, `'${v}' is outside ${o.min ?? '1'}-${o.max ?? 'any'}`);
      return bytes;
    },
  };
};

const TRUE = ['1', 'true'];
const FALSE = ['0', 'false'];

/** On/off: `1`/`true` or `0`/`false`. */
export const flag = (o: Common & { default: '0' | '1' }): Setting<boolean> => ({
  type: 'flag',
  ...o,
  values: ['0', '1', 'true', 'false'],
  parse(raw, name) {
    const v = (raw ?? o.default).toLowerCase();
    if (TRUE.includes(v)) return true;
    if (FALSE.includes(v)) return false;
    throw new ConfigError(name, `'${raw}' is not 0, 1, true or false`);
  },
});

export const oneOf = <const V extends readonly string[]>(o: Common & { values: V; default: V[number] }): Setting<V[number]> => ({
  type: 'enum',
  ...o,
  parse(raw, name) {
    const v = raw ?? o.default;
    const hit = o.values.find((x) => x === v);
    if (hit === undefined) throw new ConfigError(name, `'${v}' is not one of ${o.values.join(', ')}`);
    return hit;
  },
});

/** Comma-separated values; an empty value is the empty list. `check` returns what is wrong with an item. */
export const list = (
  o: Common & { default?: string; lower?: boolean; check?: (item: string) => string | undefined },
): Setting<string[]> => {
  const { check, lower, ...spec } = o;
  return {
    type: 'list',
    ...spec,
    parse(raw, name) {
      const items = (raw ?? o.default ?? '')
        .split(',')
        .map((s) => (lower ? s.trim().toLowerCase() : s.trim()))
        .filter((s) => s !== '');
      for (const item of items) {
        const wrong = check?.(item);
        if (wrong) throw new ConfigError(name, wrong);
      }
      return items;
    },
  };
};

/** Whether `text` is the base64 of exactly 32 bytes (an AES-256 key). */
export const isKey32 = (text: string): boolean => Buffer.from(text, 'base64').length === 32;

/** A 256-bit key, base64. */
export const key = (o: Common): Setting<string | undefined> => ({
  type: 'key',
  ...o,
  secret: true,
  parse(raw, name) {
    if (raw !== undefined && !isKey32(raw)) throw new ConfigError(name, 'must be the base64 of exactly 32 bytes');
    return raw;
  },
});

/** `name=value,name=value` with URL-encoded parts (the OTLP exporter's header syntax). */
export const headers = (o: Common): Setting<Record<string, string>> => ({
  type: 'headers',
  ...o,
  secret: true,
  parse(raw, name) {
    const out: Record<string, string> = {};
    for (const part of (raw ?? '').split(',')) {
      if (part.trim() === '') continue;
      const i = part.indexOf('=');
      if (i <= 0) throw new ConfigError(name, 'must be name=value pairs separated by commas');
      try {
        out[decodeURIComponent(part.slice(0, i).trim())] = decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        throw new ConfigError(name, 'has a malformed %-escape (names and values are URL-encoded)');
      }
    }
    return out;
  },
});

/** The OTLP transports (`OTEL_EXPORTER_OTLP_PROTOCOL`, telemetry forwarding configs, a data plane's export). */
export const OTLP_PROTOCOLS = ['http/json', 'http/protobuf', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
