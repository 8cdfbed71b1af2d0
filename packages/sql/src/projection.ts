import { logger, ServiceUnavailableError } from '@svc/core';
import { sql } from 'kysely';
import { type SearchDatabase, searchDb } from './client';

/**
 * A read model in the search engine fed from table items: payments, subscriptions (with their
 * plans' names), organisations. Each domain defines its own; the composition roots (the stream
 * projector, the rebuild, the local runtime) hold the list.
 *
 * Rows follow the table two ways, both guarded by the item's version so a row never moves
 * backwards, whatever arrives twice, late or out of order:
 * - right after a write commits (`onItemsWritten` in @svc/table), so a resource answered 201/200
 *   is in the next search (read-your-writes);
 * - from the table's stream (the projector), which retries until the row is written: the
 *   guarantee when the first way failed (the engine down, the process gone).
 */
export interface SearchProjection {
  /** Its name in logs, progress files and the engine's record of filled projections. */
  name: string;
  /** The table items' `entity` values it reads. */
  entities: readonly string[];
  /** The engine tables it fills. */
  tables: readonly string[];
  /** Upserts the rows of its items among `items` (others are ignored); resolves with how many. */
  project(items: ReadonlyArray<Record<string, unknown>>): Promise<number>;
}

/** Projects the items with every projection, side by side. */
export async function projectItems(
  projections: readonly SearchProjection[],
  items: ReadonlyArray<Record<string, unknown>>,
): Promise<number> {
  const counts = await Promise.all(projections.map((projection) => projection.project(items)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/** Items of one of these entities. */
export function itemsOf(
  entities: readonly string[],
  items: ReadonlyArray<Record<string, unknown>>,
): Record<string, unknown>[] {
  return items.filter((item) => entities.includes(item.entity as string));
}

/** Rows in one statement at most: well inside PostgreSQL's bind parameters and the Data API's request size. */
export const MAX_ROWS_PER_STATEMENT = 200;

/**
 * Upserts in group commits: calls that arrive while a statement runs are coalesced into the next
 * one, so under load one statement carries many rows, which costs the engine far less than one
 * statement each. Of one row's versions only the newest is sent. Every caller is answered when
 * the statement holding its rows has run; when a shared statement fails, each caller's rows go
 * again on their own, so one bad row never fails another caller.
 */
export function groupCommit<T>(options: {
  write: (rows: readonly T[]) => Promise<void>;
  key: (row: T) => string;
  version: (row: T) => number;
}): (rows: readonly T[]) => Promise<void> {
  interface Waiting {
    rows: readonly T[];
    resolve: () => void;
    reject: (error: unknown) => void;
  }
  const waiting: Waiting[] = [];
  let draining: Promise<void> | undefined;

  const writeNewest = async (rows: readonly T[]) => {
    const newest = new Map<string, T>();
    for (const row of rows) {
      const known = newest.get(options.key(row));
      if (!known || options.version(known) < options.version(row)) newest.set(options.key(row), row);
    }
    const all = [...newest.values()];
    for (let start = 0; start < all.length; start += MAX_ROWS_PER_STATEMENT) {
      await options.write(all.slice(start, start + MAX_ROWS_PER_STATEMENT));
    }
  };

  const takeBatch = (): Waiting[] => {
    let rows = 0;
    let count = 0;
    while (count < waiting.length) {
      const size = waiting[count]?.rows.length ?? 0;
      if (count > 0 && rows + size > MAX_ROWS_PER_STATEMENT) break;
      rows += size;
      count += 1;
    }
    return waiting.splice(0, count);
  };

  const drain = async () => {
    try {
      while (waiting.length > 0) {
        const batch = takeBatch();
        try {
          await writeNewest(batch.flatMap((entry) => entry.rows));
          for (const entry of batch) entry.resolve();
        } catch (error) {
          if (batch.length === 1) batch[0]?.reject(error);
          else for (const entry of batch) await writeNewest(entry.rows).then(entry.resolve, entry.reject);
        }
      }
    } finally {
      draining = undefined;
    }
  };

  return (rows) => {
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      waiting.push({ rows, resolve, reject });
      if (!draining) draining = drain();
    });
  };
}

/**
 * The projections the engine has never been filled for (a new engine, or a projection added by a
 * release): a rebuild of those brings them level with the table.
 */
export async function unfilledProjections(projections: readonly SearchProjection[]): Promise<SearchProjection[]> {
  const { rows } = await sql<{ name: string }>`SELECT name FROM search_projection_state`.execute(searchDb());
  const filled = new Set(rows.map((row) => row.name));
  return projections.filter((projection) => !filled.has(projection.name));
}

/** Records that a rebuild brought these projections level with the table. */
export async function markFilled(projections: readonly SearchProjection[]): Promise<void> {
  if (projections.length === 0) return;
  const names = projections.map((projection) => sql`(${projection.name})`);
  await sql`INSERT INTO search_projection_state (name) VALUES ${sql.join(names)}
    ON CONFLICT (name) DO NOTHING`.execute(searchDb());
}

/**
 * A search in the engine. The engine down (or any failure in it) is a 503 in the contract's
 * shape: nothing changed, every other path keeps working, and the projections catch up from the
 * stream once it is back.
 */
export async function inSearchEngine<T>(what: string, run: (db: SearchDatabase) => Promise<T>): Promise<T> {
  try {
    return await run(searchDb());
  } catch (error) {
    logger.error(`${what} failed in the search engine`, { error });
    throw new ServiceUnavailableError('Search is unavailable right now; try again shortly', { cause: error });
  }
}
