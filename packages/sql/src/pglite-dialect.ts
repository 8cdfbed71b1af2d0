import type { PGlite } from '@electric-sql/pglite';
import type { CompiledQuery, DatabaseConnection, Dialect, QueryResult } from 'kysely';
import { postgresDialect } from './dialect';

/**
 * Kysely on PGlite (PostgreSQL compiled to WASM, in this process): the engine of `pnpm start`
 * and the tests. One PGlite instance is one connection; it runs statements one at a time, so
 * the search code uses single statements and no interactive transactions.
 */
class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pg.query<R>(compiled.sql, [...compiled.parameters]);
    return {
      rows: result.rows,
      ...(result.affectedRows === undefined ? {} : { numAffectedRows: BigInt(result.affectedRows) }),
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered; the search reads bounded pages.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries are not supported on PGlite here');
  }
}

export function pgliteDialect(open: () => Promise<PGlite>): Dialect {
  return postgresDialect(
    async () => new PGliteConnection(await open()),
    async () => (await open()).close(),
  );
}
