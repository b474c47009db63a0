import { and, eq, inArray, isNull, type SQLWrapper } from 'drizzle-orm';
import type { SecretBox } from '../core/secrets.ts';
import type { Db } from '../store/db.ts';
import type { Exec } from '../store/pglite.ts';
import { type JsonSelectable, selectMany } from '../store/pglite-select.ts';
import { customers, projects } from '../store/schema/index.ts';

/**
 * What a section's loader (src/propagation/sections/*) is given: the load's transaction and what
 * restricts it. A loader reads its rows with `select` and gives its section(s) of the document
 * (`DocumentSections`, api/config-document.ts); sections/index.ts (generated) starts them all at
 * once, so their selects travel in one batch.
 */

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** Restricts a document to what one data plane serves: its customer's listed projects (see the pull protocol). */
export interface DocumentScope {
  customerUuid: string;
  projectUuids: readonly string[];
  /** The data plane's workspace row: only its project gateways and its own PROXY_URL are listed. */
  workspace?: { id: string; slug: string; projectUuid: string };
}

type Query = JsonSelectable & PromiseLike<unknown>;
export type Rows<T extends readonly Query[]> = { -readonly [K in keyof T]: Awaited<T[K]> };

export interface LoadContext {
  tx: Tx;
  secrets: SecretBox;
  /** GATEWAY_UPSTREAM_ALLOW_PRIVATE: every connection and MCP server may reach private addresses. */
  upstreamAllowPrivate: boolean;
  /** A separate data plane's scope (absent: every live project). */
  scope: DocumentScope | undefined;
  now: Date;
  /**
   * The row ids of the live projects of live customers in scope (a subquery, for `inArray`): a
   * project-owned row is listed only when its project is (a stray row of a deleted tenant never
   * reaches a snapshot).
   */
  live: () => SQLWrapper;
  /**
   * Runs selects and gives their rows in order. The selects of every call made in the same tick
   * go together (on PGlite in one round trip, store/pglite-select.ts): a loader calls it before
   * any other await to join the load's one batch.
   */
  select: <const T extends readonly Query[]>(queries: T) => Promise<Rows<T>>;
}

const NO_PROJECT = '00000000-0000-0000-0000-000000000000';

/** The live projects of live customers (in `scope` when given), as a subquery of their row ids. */
export const liveProjects = (tx: Tx, scope: DocumentScope | undefined) => (): SQLWrapper =>
  tx
    .select({ id: projects.id })
    .from(projects)
    .innerJoin(customers, eq(customers.id, projects.customerUuid))
    .where(
      and(
        isNull(projects.deletedAt),
        isNull(customers.deletedAt),
        scope ? eq(projects.customerUuid, scope.customerUuid) : undefined,
        scope ? inArray(projects.id, scope.projectUuids.length > 0 ? [...scope.projectUuids] : [NO_PROJECT]) : undefined,
      ),
    );

interface Waiting {
  queries: readonly Query[];
  settle: (rows: unknown[]) => void;
  fail: (e: unknown) => void;
}

/**
 * `select` of a LoadContext: the selects asked for in one tick are collected and run by one
 * `selectMany` (through `exec` on PGlite; one by one through drizzle without it), then each caller
 * gets its share of the rows.
 */
export const batchedSelect = (exec: Exec | undefined): LoadContext['select'] => {
  let waiting: Waiting[] = [];
  const flush = async (): Promise<void> => {
    const batch = waiting;
    waiting = [];
    try {
      const rows: unknown[] = await selectMany(
        exec,
        batch.flatMap((w) => w.queries),
      );
      let at = 0;
      for (const w of batch) {
        w.settle(rows.slice(at, at + w.queries.length));
        at += w.queries.length;
      }
    } catch (e) {
      for (const w of batch) w.fail(e);
    }
  };
  return <const T extends readonly Query[]>(queries: T) =>
    new Promise<Rows<T>>((resolve, reject) => {
      if (waiting.length === 0) queueMicrotask(() => void flush());
      // selectMany gives each query's rows as drizzle would (the same cast as there).
      waiting.push({ queries, settle: (rows) => resolve(rows as Rows<T>), fail: reject });
    });
};
