import { sql } from 'drizzle-orm';
import type { SecretBox } from '../core/secrets.ts';
import type { Db } from './db.ts';

/**
 * KEK rotation over the whole store: every value wrapped by the SecretBox is re-wrapped under the
 * current KEK. Which columns hold wrapped values is a naming rule of the schema: a text column
 * whose name ends in `_wrapped` or `_encrypted` (provider connection keys, BYOK secrets, signing
 * keys, and whatever is added under the same rule). The columns are found in the catalog, so a new
 * one is covered without being listed here.
 *
 * Each value is replaced with a compare-and-set (`where col = old`): a row written or changed
 * concurrently by a running gateway is left alone (it is then already under the current KEK, or
 * the next run takes it). Running gateways keep working throughout: they hold the previous KEK in
 * GATEWAY_KEK_PREVIOUS and read both forms.
 */

export interface WrappedColumn {
  table: string;
  column: string;
}

export interface RewrapReport {
  columns: WrappedColumn[];
  /** Values re-wrapped under the current KEK. */
  rewrapped: number;
  /** Values already under the current KEK. */
  current: number;
  /** Values that could not be unwrapped with any KEK of the ring (names of their columns). */
  failed: { table: string; column: string; count: number }[];
}

const rowsOf = (r: unknown): Record<string, unknown>[] => (Array.isArray(r) ? r : (r as { rows: Record<string, unknown>[] }).rows);
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/** The wrapped-secret columns of the store (public schema, text, named `*_wrapped` / `*_encrypted`). */
export const wrappedColumns = async (db: Db): Promise<WrappedColumn[]> => {
  const r = await db.execute(sql`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = 'public' and c.data_type = 'text' and c.column_name ~ '_(wrapped|encrypted)$'
    order by 1, 2`);
  return rowsOf(r).map((row) => ({ table: String(row.table_name), column: String(row.column_name) }));
};

/** Re-wraps every wrapped value of the store under the current KEK (see the module comment). */
export const rewrapStore = async (db: Db, secrets: SecretBox, batch = 500): Promise<RewrapReport> => {
  const columns = await wrappedColumns(db);
  const report: RewrapReport = { columns, rewrapped: 0, current: 0, failed: [] };
  for (const { table, column } of columns) {
    const col = ident(column);
    const tbl = ident(table);
    let failed = 0;
    const skip = new Set<string>();
    for (;;) {
      const prefix = `v2:${secrets.currentKekId}:%`;
      const r = await db.execute(
        sql.raw(`select ${col} as v from ${tbl} where ${col} is not null and ${col} not like '${prefix}' limit ${batch + skip.size}`),
      );
      const values = rowsOf(r)
        .map((row) => String(row.v))
        .filter((v) => !skip.has(v));
      if (values.length === 0) break;
      for (const old of values) {
        let next: string;
        try {
          next = secrets.rewrap(old);
        } catch {
          failed++;
          skip.add(old);
          continue;
        }
        await db.execute(sql`update ${sql.raw(tbl)} set ${sql.raw(col)} = ${next} where ${sql.raw(col)} = ${old}`);
        report.rewrapped++;
      }
    }
    const cur = await db.execute(sql.raw(`select count(*)::int as n from ${tbl} where ${col} like 'v2:${secrets.currentKekId}:%'`));
    report.current += Number(rowsOf(cur)[0]?.n ?? 0);
    if (failed > 0) report.failed.push({ table, column, count: failed });
  }
  report.current -= report.rewrapped;
  return report;
};

/** Wrapped values of the store NOT under the current KEK (0 after a complete rotation). */
export const staleWrapped = async (db: Db, secrets: SecretBox): Promise<number> => {
  let n = 0;
  for (const { table, column } of await wrappedColumns(db)) {
    const r = await db.execute(
      sql.raw(
        `select count(*)::int as n from ${ident(table)} where ${ident(column)} is not null and ${ident(column)} not like 'v2:${secrets.currentKekId}:%'`,
      ),
    );
    n += Number(rowsOf(r)[0]?.n ?? 0);
  }
  return n;
};
