import { now } from '@svc/core';
import { queryPages } from '@svc/table';
import * as z from 'zod';
import { DUE_SHARDS, type DueEntry, dueBefore, dueEntryOf, duePartition } from '../repository/subscription-repository';
import { type BillingOutcome, billSubscription, retryInvoice } from './billing';
import { remindIfDue } from './reminders';

/**
 * What a billing run finds: every due-index entry at or before now, read shard by shard in
 * parallel (keys only). Entries are yielded page by page so a run with many due items streams
 * them to the queue instead of holding them all.
 */
export async function* dueWork(at = now()): AsyncGenerator<DueEntry[]> {
  const before = dueBefore(at);
  const shards = Array.from({ length: DUE_SHARDS }, (_, shard) =>
    (async () => {
      const pages: DueEntry[][] = [];
      for await (const page of queryPages({ index: 'due', partition: duePartition(shard), sortBefore: before })) {
        pages.push(page.map(dueEntryOf).filter((entry): entry is DueEntry => entry !== undefined));
      }
      return pages;
    })(),
  );
  for (const pages of await Promise.all(shards)) yield* pages;
}

/** One billing run: every due entry becomes one message for the worker. */
export async function runBilling(send: (entries: DueEntry[]) => Promise<void>): Promise<{ due: number }> {
  let due = 0;
  for await (const entries of dueWork()) {
    if (entries.length === 0) continue;
    await send(entries);
    due += entries.length;
  }
  return { due };
}

export const dueEntrySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('subscription'), subscription_uuid: z.string(), due: z.number() }),
  z.object({
    kind: z.literal('invoice'),
    subscription_uuid: z.string(),
    invoice_uuid: z.string(),
    due: z.number(),
  }),
]);

/**
 * The worker's step for one message; safe to repeat (see billing.ts and reminders.ts). A
 * subscription's reminder comes first; a reminder that fails holds up no charge: the message fails
 * after the billing step and comes again.
 */
export async function processDueEntry(entry: DueEntry): Promise<BillingOutcome> {
  if (entry.kind === 'invoice') return retryInvoice(entry.subscription_uuid, entry.invoice_uuid);
  const reminded = await remindIfDue(entry.subscription_uuid).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const outcome = await billSubscription(entry.subscription_uuid);
  if (reminded) throw reminded.error;
  return outcome;
}
