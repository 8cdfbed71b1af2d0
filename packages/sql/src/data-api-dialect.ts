import {
  ExecuteStatementCommand,
  type ExecuteStatementCommandOutput,
  type RDSDataClient,
  type SqlParameter,
} from '@aws-sdk/client-rds-data';
import type { CompiledQuery, DatabaseConnection, Dialect, QueryResult } from 'kysely';
import { postgresDialect } from './dialect';

/**
 * Kysely on Aurora PostgreSQL through the RDS Data API: HTTPS calls signed with the function's
 * role, no VPC and no connection pool. Kysely's `$1` placeholders become the Data API's named
 * `:p1`; values are sent typed (the search binds numbers as strings and casts them in SQL, so
 * nothing is rounded on the way), and rows come back as JSON records.
 */
export interface DataApiTarget {
  client: RDSDataClient;
  resourceArn: string;
  secretArn: string;
  database: string;
}

export function toDataApiParameter(value: unknown, index: number): SqlParameter {
  const name = `p${index + 1}`;
  if (value === null || value === undefined) return { name, value: { isNull: true } };
  if (typeof value === 'string') return { name, value: { stringValue: value } };
  if (typeof value === 'boolean') return { name, value: { booleanValue: value } };
  if (typeof value === 'bigint') return { name, value: { longValue: Number(value) } };
  if (typeof value === 'number') {
    return Number.isSafeInteger(value)
      ? { name, value: { longValue: value } }
      : { name, value: { stringValue: String(value) }, typeHint: 'DECIMAL' };
  }
  return { name, value: { stringValue: JSON.stringify(value) }, typeHint: 'JSON' };
}

/** `$1` → `:p1`, outside quoted text (the search's SQL has none with a dollar in it). */
export function toNamedPlaceholders(sql: string): string {
  return sql.replace(/\$(\d+)/g, (_, digits: string) => `:p${digits}`);
}

class DataApiConnection implements DatabaseConnection {
  constructor(private readonly target: DataApiTarget) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const out: ExecuteStatementCommandOutput = await this.target.client.send(
      new ExecuteStatementCommand({
        resourceArn: this.target.resourceArn,
        secretArn: this.target.secretArn,
        database: this.target.database,
        sql: toNamedPlaceholders(compiled.sql),
        parameters: compiled.parameters.map(toDataApiParameter),
        formatRecordsAs: 'JSON',
      }),
    );
    const rows = out.formattedRecords ? (JSON.parse(out.formattedRecords) as R[]) : [];
    return {
      rows,
      ...(out.numberOfRecordsUpdated === undefined ? {} : { numAffectedRows: BigInt(out.numberOfRecordsUpdated) }),
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered; the search reads bounded pages.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries are not supported on the Data API');
  }
}

export function dataApiDialect(target: DataApiTarget): Dialect {
  return postgresDialect(
    async () => new DataApiConnection(target),
    async () => undefined,
  );
}
