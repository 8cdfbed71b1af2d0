import { type DomainName, ROUTE_TABLE, type RouteEntry } from '@svc/api';
import { INDEXES, type IndexName } from '@svc/table';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';

export type TableAccess = 'none' | 'read' | 'readWrite';

const RANK: Record<TableAccess, number> = { none: 0, read: 1, readWrite: 2 };

/** What the code sends (GetCommand, BatchGetCommand, QueryCommand). Nothing scans on a request path. */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;

/** Put/Update/Delete, and the parts of TransactWriteItems (which IAM checks per operation). */
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/**
 * Table access a domain needs beyond what its authenticated routes imply: the route table cannot
 * tell what a public route touches. Identity's token route takes no token, yet it reads and
 * writes clients and publishes the signing keys' public halves.
 */
const OWN_ACCESS: Partial<Record<DomainName, TableAccess>> = {
  identity: 'readWrite',
};

/** Methods whose handlers change state (unless the route is readOnly): POST also keeps an idempotency record per key. */
const MUTATING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Least privilege derived from the route table, so a domain added there gets the right grant:
 * authenticated routes read the caller's client item and the public signing keys; authenticated
 * POSTs also write idempotency records (and PUT/PATCH/DELETE change the domain's items).
 * A domain serving neither, and not listed in OWN_ACCESS, gets no table access at all.
 */
export function tableAccessFor(domain: DomainName, routes: readonly RouteEntry[] = ROUTE_TABLE): TableAccess {
  const own = routes.filter((entry) => entry.domain === domain);
  const authenticated = own.filter((entry) => entry.route.auth === 'token');
  const writes = (entry: RouteEntry) => MUTATING.has(entry.route.method) && !entry.route.readOnly;
  // Public routes that change state (the simulated provider's approval form) write too.
  const publicWrites = own.some((entry) => entry.route.auth === 'none' && writes(entry));
  const fromRoutes: TableAccess =
    authenticated.some(writes) || publicWrites ? 'readWrite' : authenticated.length > 0 ? 'read' : 'none';
  const declared = OWN_ACCESS[domain] ?? 'none';
  return RANK[declared] > RANK[fromRoutes] ? declared : fromRoutes;
}

/** A table action a domain function may be granted: the reads and writes above, never more. */
export type TableAction = (typeof TABLE_READ_ACTIONS)[number] | (typeof TABLE_WRITE_ACTIONS)[number];

/**
 * What a domain function may do with the table: actions on the table itself, and Query on the
 * named indexes (IAM checks an index query against the index's own ARN).
 */
export interface TableGrant {
  tableActions: readonly TableAction[];
  indexes: readonly IndexName[];
}

const ALL_INDEXES = Object.keys(INDEXES).filter((name): name is IndexName => name in INDEXES);

/** What each tier allows: the most a domain at that tier may hold. */
const TIER_GRANTS: Record<TableAccess, TableGrant> = {
  none: { tableActions: [], indexes: [] },
  read: { tableActions: [...TABLE_READ_ACTIONS], indexes: ALL_INDEXES },
  readWrite: { tableActions: [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS], indexes: ALL_INDEXES },
};

/**
 * Domains whose code is known to use less than its tier gives: the grant is narrowed to what the
 * code sends. A narrowing can only take away (tableGrantFor refuses one that adds to the tier the
 * route table implies), so the route table stays the ceiling. Update it with the domain's code.
 */
const NARROWED: Partial<Record<DomainName, TableGrant>> = {
  /**
   * Processes, users and partner integrations, and through identity's, organisations' and
   * webhooks' exported functions the clients, organisations and endpoints an execution creates.
   * Reads by key (GetItem, BatchGetItem); lists on gsi1 (an organisation's integrations, the
   * configuration's partner) and gsi2 (a partner client's integrations), never the table's own
   * partitions, never the due index. Writes: TransactWriteItems of Put/Update/Delete/ConditionCheck
   * (checked per operation) and single Put/Update/Delete (a one-item transaction, idempotency
   * records). No BatchWriteItem, no Scan.
   */
  onboarding: {
    tableActions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
    indexes: ['gsi1', 'gsi2'],
  },
  /**
   * Its own code only reads: source configurations and reports by key (GetItem, BatchGetItem), an
   * organisation's reports on gsi1. Its one authenticated POST (the deprecated blueprint execution,
   * whose files go to the bucket, not the table) keeps an idempotency record per Idempotency-Key
   * (@svc/http: a conditional Put, an Update when done, failed or taken over; never a Delete). No
   * table Query, no BatchWriteItem, no ConditionCheckItem, no other index. The file processor is
   * no route's function; its grant is in reconciliation.ts.
   */
  reconciliation: {
    tableActions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    indexes: ['gsi1'],
  },
};

/**
 * The grant of a domain's function: its tier (tableAccessFor), narrowed where NARROWED says what
 * the code sends. Throws if a narrowing would grant anything the tier does not.
 */
export function tableGrantFor(domain: DomainName, routes: readonly RouteEntry[] = ROUTE_TABLE): TableGrant {
  const access = tableAccessFor(domain, routes);
  const ceiling = TIER_GRANTS[access];
  const narrowed = NARROWED[domain];
  if (!narrowed) return ceiling;
  const beyond = [
    ...narrowed.tableActions.filter((action) => !ceiling.tableActions.includes(action)),
    ...narrowed.indexes.filter((index) => !ceiling.indexes.includes(index)).map((index) => `Query on ${index}`),
  ];
  if (beyond.length > 0) {
    throw new Error(`The table grant of ${domain} names ${beyond.join(', ')}, beyond its route-derived ${access}`);
  }
  return narrowed;
}

/**
 * Grants exactly `grant` on the table and, for queries, on each named index from @svc/table
 * (no `index/*` wildcard, so a new index is a reviewed change here too).
 */
export function grantTableAccess(table: ITable, grantee: IGrantable, grant: TableGrant): void {
  if (grant.tableActions.length > 0) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...grant.tableActions], resources: [table.tableArn] }),
    );
  }
  if (grant.indexes.length > 0) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: grant.indexes.map((index) => `${table.tableArn}/index/${INDEXES[index].name}`),
      }),
    );
  }
}
