/**
 * The single table's physical shape. The CDK table, the local runtime's CreateTable and every
 * repository import these names, so the three cannot drift.
 */
export const KEY = { partition: 'pk', sort: 'sk' } as const;

/** Overloaded global secondary indexes; each entity documents what it puts in them. */
export const INDEXES = {
  gsi1: { name: 'gsi1', partition: 'gsi1pk', sort: 'gsi1sk', projection: 'ALL' },
  gsi2: { name: 'gsi2', partition: 'gsi2pk', sort: 'gsi2sk', projection: 'ALL' },
  /**
   * Sparse: only items that are due for background work carry these attributes. Keys only: the
   * sort key names what is due, so a billing run reads a few bytes per due item.
   */
  due: { name: 'due', partition: 'duepk', sort: 'duesk', projection: 'KEYS_ONLY' },
} as const;

export type IndexName = keyof typeof INDEXES;

/** Items with this attribute (Unix seconds) are removed by DynamoDB's TTL. */
export const TTL_ATTRIBUTE = 'ttl';

/** Every attribute used as a key, with its type, for CreateTable and the CDK. */
export const KEY_ATTRIBUTES: ReadonlyArray<{ name: string; type: 'S' | 'N' }> = [
  { name: KEY.partition, type: 'S' },
  { name: KEY.sort, type: 'S' },
  ...Object.values(INDEXES).flatMap((index) => [
    { name: index.partition, type: 'S' as const },
    { name: index.sort, type: 'S' as const },
  ]),
];

export function tableName(): string {
  const name = process.env.SVC_TABLE_NAME;
  if (!name) throw new Error('SVC_TABLE_NAME is not set');
  return name;
}
