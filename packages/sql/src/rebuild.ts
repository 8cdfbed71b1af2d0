import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '@svc/table';
import { sql } from 'kysely';
import * as z from 'zod';
import { searchDb } from './client';
import { markFilled, projectItems, type SearchProjection } from './projection';

/**
 * `pnpm ops search:rebuild` (and the local runtime, for projections the engine was never filled
 * for): fills the search engine from the table, for a new stage, a projection added by a release,
 * or after the projector gave up on records. Parallel scan segments read every item of the
 * projections' entities and upsert its row (guarded by version, so running beside the live
 * projector or twice is harmless). Each segment's position is saved after every page in a
 * progress file: an interrupted rebuild goes on from there.
 */
export interface RebuildOptions {
  /** What to fill (every projection of the app, or those `unfilledProjections` names). */
  projections: readonly SearchProjection[];
  segments: number;
  /** Where positions are kept between runs; removed once every segment is done. */
  progressFile: string;
  /** Start again from the beginning even if a progress file exists. */
  restart?: boolean;
  /** Progress (items scanned so far, the table's approximate item count). */
  onProgress?: (scanned: number, approximateTotal: number) => void;
  /** Items read per scan page (default 500). */
  pageSize?: number;
  /** How a page's items reach the engine (default: the projections' upserts). */
  project?: (items: ReadonlyArray<Record<string, unknown>>) => Promise<number>;
}

export interface RebuildSummary {
  scanned: number;
  projected: number;
  segments: number;
  resumed: boolean;
}

const progressSchema = z.object({
  table: z.string(),
  projections: z.array(z.string()),
  segments: z.int().min(1),
  positions: z.array(z.union([z.literal('done'), z.record(z.string(), z.unknown()), z.null()])),
  scanned: z.int(),
  projected: z.int(),
});
type Progress = z.infer<typeof progressSchema>;

function loadProgress(options: RebuildOptions): Progress | undefined {
  if (options.restart || !existsSync(options.progressFile)) return undefined;
  const progress = progressSchema.parse(JSON.parse(readFileSync(options.progressFile, 'utf8')));
  if (
    progress.table !== tableName() ||
    progress.segments !== options.segments ||
    progress.projections.join() !== names(options).join()
  ) {
    throw new Error(
      `${options.progressFile} is a rebuild of ${progress.projections.join(', ')} from ${progress.table} in ${progress.segments} segments; use --restart to begin again`,
    );
  }
  return progress;
}

const names = (options: RebuildOptions) => options.projections.map((projection) => projection.name);

export async function rebuildSearch(options: RebuildOptions): Promise<RebuildSummary> {
  const earlier = loadProgress(options);
  const entities = [...new Set(options.projections.flatMap((projection) => projection.entities))];
  if (entities.length === 0) return { scanned: 0, projected: 0, segments: options.segments, resumed: false };
  const project = options.project ?? ((items) => projectItems(options.projections, items));
  const progress: Progress = earlier ?? {
    table: tableName(),
    projections: names(options),
    segments: options.segments,
    positions: Array.from({ length: options.segments }, () => null),
    scanned: 0,
    projected: 0,
  };
  const described = await db().send(new DescribeTableCommand({ TableName: tableName() }));
  const approximateTotal = described.Table?.ItemCount ?? 0;
  const save = () => writeFileSync(options.progressFile, JSON.stringify(progress));

  await Promise.all(
    progress.positions.map(async (_, segment) => {
      while (progress.positions[segment] !== 'done') {
        const from = progress.positions[segment];
        const page = await db().send(
          new ScanCommand({
            TableName: tableName(),
            Segment: segment,
            TotalSegments: options.segments,
            Limit: options.pageSize ?? 500,
            FilterExpression: `entity IN (${entities.map((_, i) => `:e${i}`).join(', ')})`,
            ExpressionAttributeValues: Object.fromEntries(entities.map((entity, i) => [`:e${i}`, entity])),
            ...(from ? { ExclusiveStartKey: from } : {}),
          }),
        );
        // Awaited first: `x += await …` would read x before the wait and lose the other segments' counts.
        const projected = await project(page.Items ?? []);
        progress.projected += projected;
        progress.scanned += page.ScannedCount ?? 0;
        progress.positions[segment] = page.LastEvaluatedKey ?? 'done';
        save();
        options.onProgress?.(progress.scanned, approximateTotal);
      }
    }),
  );
  // What autovacuum does on Aurora; the embedded engine has none of its own.
  if (!process.env.SVC_SEARCH_CLUSTER_ARN) {
    for (const table of options.projections.flatMap((projection) => projection.tables)) {
      await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(searchDb());
    }
  }
  await markFilled(options.projections);
  rmSync(options.progressFile, { force: true });
  return {
    scanned: progress.scanned,
    projected: progress.projected,
    segments: options.segments,
    resumed: Boolean(earlier),
  };
}

/** A one-line progress bar for a terminal (stderr), redrawn in place. */
export function progressBar(scanned: number, total: number, width = 30): string {
  const share = total > 0 ? Math.min(1, scanned / total) : 0;
  const filled = Math.round(share * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  ${scanned.toLocaleString('en')} items scanned`;
}
