import type { ComponentChildren } from 'preact';
import { labelOf } from './fields.ts';

/**
 * A table in a scrollable, keyboard-focusable region (narrow screens scroll it sideways). Columns
 * named by an API field (`userId`, `inputTokens`) are headed in words ("User ID", "Input tokens"),
 * the field's API name in the header's title (its tooltip).
 */

/** A column's header: an API field name in words; a header already in words as given, capitalised. */
export const headerOf = (column: string): string => labelOf(column);

export interface Row {
  key: string;
  cells: ComponentChildren[];
  class?: string;
  /** One cell across every column (details under the row above). */
  span?: boolean;
}

export function Table({ label, columns, rows }: { label: string; columns: string[]; rows: Row[] }) {
  return (
    <section class="table-wrap" tabIndex={0} aria-label={`${label} table`}>
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c} title={/^[a-z][A-Za-z0-9]*$/.test(c) && c !== 'actions' ? c : undefined}>
                {headerOf(c)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} class={r.class}>
              {r.span ? <td colSpan={columns.length}>{r.cells}</td> : r.cells.map((c, i) => <td key={columns[i] ?? i}>{c}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
