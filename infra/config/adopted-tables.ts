import { existsSync, readFileSync } from 'node:fs';
import * as z from 'zod';
import { fromRepoRoot } from '../constructs/repo-paths';
import { STAGE_NAMES, StageConfigurationError, type StageName } from './stages';

/**
 * The table each stage was moved onto by `pnpm ops table:adopt` (a point-in-time restore), kept
 * in the repo beside the stages' configuration so that every later synth, with or without `-c`
 * options, keeps the stage on it (docs/operations.md, "Restoring the table"). The ops command
 * writes the stage's entry (apps/ops/src/adopted-table.ts, the same format); the operator
 * commits it with the deploy. A stage without an entry has the table its stack makes.
 *
 * Why a file and not `cdk import`: a stack that stops declaring its table has CloudFormation
 * delete it unless its DeletionPolicy keeps it ("This capability also applies to stack update
 * operations that lead to resources being deleted from stacks. For example, if you remove the
 * resource from the stack template", https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-attribute-deletionpolicy.html);
 * staging's and prod's table is RetainExceptOnCreate, so it stays when the adopted one replaces
 * it, and the adopted one is referenced, never declared, so no deploy can create, replace or
 * delete it. Importing the restored table instead would need the old one removed (retained)
 * first and a template matching the table exactly, with a DeletionPolicy of Retain or
 * RetainExceptOnCreate (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/import-resources-automatically.html):
 * two deploys in the middle of an incident. Not built.
 */
export const ADOPTED_TABLES_FILE = fromRepoRoot('infra/config/adopted-tables.json');

export interface AdoptedTable {
  tableName: string;
  /** The stream `table:adopt` enabled: the event pipeline and the search projector read it. */
  streamArn: string;
  /** When `table:adopt` wrote it (ISO 8601), for whoever reads the file later. */
  adoptedAt?: string;
}

const adoptedTableSchema = z.object({
  tableName: z.string(),
  streamArn: z.string(),
  adoptedAt: z.string().optional(),
});
const fileSchema = z.record(z.string(), adoptedTableSchema);

/** The file's entries by stage; a missing file is no adopted table anywhere. */
export function readAdoptedTables(file: string = ADOPTED_TABLES_FILE): Partial<Record<StageName, AdoptedTable>> {
  if (!existsSync(file)) return {};
  const parsed = fileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    throw new StageConfigurationError(
      `${file} is not a map of stage to { tableName, streamArn }: ${parsed.error.message}`,
    );
  }
  const unknown = Object.keys(parsed.data).filter((stage) => !(STAGE_NAMES as readonly string[]).includes(stage));
  if (unknown.length > 0) {
    throw new StageConfigurationError(
      `${file} names no stage ${unknown.join(', ')} (stages: ${STAGE_NAMES.join(', ')})`,
    );
  }
  return parsed.data as Partial<Record<StageName, AdoptedTable>>;
}
