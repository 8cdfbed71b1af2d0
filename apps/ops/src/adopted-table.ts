import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * infra/config/adopted-tables.json: the table each deployed stage runs on after `pnpm ops
 * table:adopt`, by stage (`{ "prod": { "tableName", "streamArn", "adoptedAt" } }`). The CDK app
 * reads it on every synth (infra/config/adopted-tables.ts, the same format), so an ordinary
 * `pnpm run deploy` keeps the stage on the adopted table; the operator commits the file with the
 * deploy. Without it, the next deploy would give the stage the table its stack makes: a new,
 * empty one.
 */
export const ADOPTED_TABLES_FILE = resolve(import.meta.dirname, '../../../infra/config/adopted-tables.json');

export interface AdoptedTableEntry {
  tableName: string;
  streamArn: string;
  adoptedAt: string;
}

/**
 * Sets the stage's entry, keeping the other stages' and the file's layout (two-space JSON, a
 * final newline, as biome formats it), and writes it whole (a temporary file renamed over it,
 * so an interrupted write leaves the previous file).
 */
export function recordAdoptedTable(stage: string, entry: AdoptedTableEntry, file: string = ADOPTED_TABLES_FILE): void {
  const current: unknown = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  if (typeof current !== 'object' || current === null || Array.isArray(current)) {
    throw new Error(`${file} is not a map of stage to table; fix it by hand before adopting`);
  }
  const next = { ...(current as Record<string, unknown>), [stage]: entry };
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temporary, file);
}
