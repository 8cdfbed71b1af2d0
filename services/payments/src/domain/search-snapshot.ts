import { now } from '@svc/core';
import { paymentsOfOrganisation } from '../repository/payment-repository';
import { paymentShape } from './shapes';

/**
 * The search documents of each organisation, kept in this container between requests. The
 * first search of an organisation reads all its payments; every later one first catches up
 * with what changed since the last one (the index is sorted by change time), then searches in
 * memory. Each search runs its own catch-up after the request arrived, so a payment whose create
 * call returned before the search began is always in it.
 *
 * A change is re-read for OVERLAP_SECONDS after it happened, which covers the index's
 * replication lag. When the service clock goes backwards (tests, the local clock), the
 * snapshot is read afresh. Snapshots beyond MAX_DOCUMENTS are dropped, least recently used first.
 */
const OVERLAP_SECONDS = 5;
const MAX_DOCUMENTS = 1_000_000;

export interface SearchEntry {
  accountUuid: string;
  version: number;
  document: Record<string, unknown>;
}

interface Snapshot {
  entries: Map<string, SearchEntry>;
  syncedAt?: number;
  queue: Promise<void>;
  lastUsed: number;
}

const snapshots = new Map<string, Snapshot>();

export async function searchEntries(organisationUuid: string): Promise<Iterable<SearchEntry>> {
  let snapshot = snapshots.get(organisationUuid);
  if (!snapshot) {
    snapshot = { entries: new Map(), queue: Promise.resolve(), lastUsed: 0 };
    snapshots.set(organisationUuid, snapshot);
  }
  const current = snapshot;
  current.lastUsed = Date.now();
  current.queue = current.queue.catch(() => undefined).then(() => catchUp(organisationUuid, current));
  await current.queue;
  evictBeyondLimit();
  return current.entries.values();
}

async function catchUp(organisationUuid: string, snapshot: Snapshot): Promise<void> {
  const startedAt = now();
  if (snapshot.syncedAt !== undefined && startedAt < snapshot.syncedAt) {
    snapshot.entries.clear();
    snapshot.syncedAt = undefined;
  }
  const since = snapshot.syncedAt === undefined ? undefined : snapshot.syncedAt - OVERLAP_SECONDS;
  for await (const page of paymentsOfOrganisation(organisationUuid, since)) {
    for (const payment of page) {
      const known = snapshot.entries.get(payment.uuid);
      if (known && known.version > payment.version) continue;
      snapshot.entries.set(payment.uuid, {
        accountUuid: payment.account_uuid,
        version: payment.version,
        document: paymentShape(payment),
      });
    }
  }
  snapshot.syncedAt = startedAt;
}

function evictBeyondLimit(): void {
  let total = 0;
  for (const snapshot of snapshots.values()) total += snapshot.entries.size;
  const byAge = [...snapshots.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
  for (const [organisation, snapshot] of byAge) {
    if (total <= MAX_DOCUMENTS) return;
    total -= snapshot.entries.size;
    snapshots.delete(organisation);
  }
}
