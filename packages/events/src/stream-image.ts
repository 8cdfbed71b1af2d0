import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * Turns a stream record's image into a plain item. DynamoDB Local writes an empty map as `{}`
 * instead of `{"M": {}}` in stream records (AWS does not); such values are read as empty maps,
 * so the pipeline behaves the same on both.
 */
export function itemFromStreamImage(image: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!image) return undefined;
  return unmarshall(repair(image) as Record<string, AttributeValue>);
}

function repair(image: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(image)) out[name] = repairValue(value);
  return out;
}

function repairValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  if (entries.length === 0) return { M: {} };
  const [[type, inner] = ['', undefined]] = entries;
  if (type === 'M' && inner && typeof inner === 'object') return { M: repair(inner as Record<string, unknown>) };
  if (type === 'L' && Array.isArray(inner)) return { L: inner.map(repairValue) };
  return value;
}
