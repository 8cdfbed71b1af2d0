/**
 * Consecutive items in groups an AWS batch call accepts: at most `maxCount` items and `maxBytes`
 * together. An item too large alone goes alone (and the call refuses it), never with others.
 */
export function batchesOf<T>(
  items: readonly T[],
  sizeOf: (item: T) => number,
  maxCount: number,
  maxBytes: number,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (current.length > 0 && (current.length === maxCount || bytes + size > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
