import { Column, is } from 'drizzle-orm';
import { dollarQuoted, type Exec } from './pglite.ts';

/**
 * Many drizzle selects read from the embedded PGlite in one round trip, each as one JSON text.
 *
 * On PGlite every drizzle query costs ~1 ms of event-loop time before its rows (six protocol
 * messages through WebAssembly, and a parsers map merged per query), and each field of each row is
 * copied out of WebAssembly memory and decoded on its own: reading the configuration document
 * (17 queries, 1,000 API keys) held the loop ~100 ms per change. Here each select becomes
 * `select json_agg(json_build_array(…)) from (<the select>) x(c0, c1, …)` — one field per query —
 * and all of them go in one `exec` of the simple protocol inside the caller's transaction. Rows are
 * mapped through each column's own `mapFromDriverValue`, as drizzle maps them.
 *
 * A select this does not cover runs through drizzle as before (in the same transaction): fields
 * that are not plain columns of one level (expressions, nested objects), an ORDER BY (json_agg over
 * a sorted subquery is not guaranteed to keep the order), or a parameter that is not a string,
 * number, boolean or null.
 */

export interface JsonSelectable {
  toSQL(): { sql: string; params: unknown[] };
  /** drizzle's builder state: the selected fields by result key. */
  readonly _: { readonly selectedFields: unknown };
}

/** A parameter as an SQL literal, or undefined when it has no safe literal form here. */
const literal = (v: unknown): string | undefined => {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return dollarQuoted(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return undefined;
};

interface Plan {
  text: string;
  fields: [string, Column][];
}

/** The JSON form of one select, or undefined when it must run through drizzle. */
const planOf = (q: JsonSelectable): Plan | undefined => {
  const fields: [string, Column][] = [];
  const selected = q._.selectedFields;
  if (typeof selected !== 'object' || selected === null) return undefined;
  for (const [key, f] of Object.entries(selected)) {
    if (!is(f, Column)) return undefined;
    fields.push([key, f]);
  }
  if (fields.length === 0) return undefined;
  const { sql, params } = q.toSQL();
  if (/\border\s+by\b/i.test(sql)) return undefined;
  const values = params.map(literal);
  if (values.some((v) => v === undefined)) return undefined;
  let missing = false;
  const inner = sql.replace(/\$(\d+)\b/g, (_, n: string) => {
    const v = values[Number(n) - 1];
    if (v === undefined) missing = true;
    return v ?? '';
  });
  if (missing) return undefined;
  // numeric and 64-bit integers as text, as the driver gives them (a JSON number would round them).
  const exprs = fields.map(([, c], i) => (c.columnType === 'PgNumeric' || c.columnType === 'PgBigInt64' ? `x.c${i}::text` : `x.c${i}`));
  const names = fields.map((_, i) => `c${i}`).join(',');
  return {
    text: `select coalesce(json_agg(json_build_array(${exprs.join(',')})), '[]')::text as v from (${inner}) as x(${names})`,
    fields,
  };
};

const rowsOf = (json: string, fields: [string, Column][]): Record<string, unknown>[] =>
  (JSON.parse(json) as unknown[][]).map((row) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const [key, col] = fields[i] as [string, Column];
      const raw = row[i];
      out[key] = raw === null || raw === undefined ? null : col.mapFromDriverValue(raw);
    }
    return out;
  });

/**
 * Runs `queries` and gives their rows in order: through one `exec` on PGlite (`exec` given), else
 * each awaited through drizzle.
 */
export const selectMany = async <T extends readonly (JsonSelectable & PromiseLike<unknown>)[]>(
  exec: Exec | undefined,
  queries: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> => {
  const out: unknown[] = new Array(queries.length);
  const plans = exec ? queries.map(planOf) : queries.map(() => undefined);
  const batched = plans.flatMap((p, i) => (p ? [{ p, i }] : []));
  if (exec && batched.length > 0) {
    const results = (await exec(batched.map(({ p }) => p.text).join(';\n'))) as { rows: { v: string }[] }[];
    batched.forEach(({ p, i }, k) => {
      const text = results[k]?.rows[0]?.v;
      if (typeof text !== 'string') throw new Error('a batched select gave no result');
      out[i] = rowsOf(text, p.fields);
    });
  }
  for (let i = 0; i < queries.length; i++) if (!plans[i]) out[i] = await queries[i];
  return out as { -readonly [K in keyof T]: Awaited<T[K]> };
};
