import { type DomainName, ROUTE_TABLE, type RouteEntry } from '@svc/api';
import { INDEXES } from '@svc/table';
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

/**
 * Grants exactly `access` on the table and, for queries, on each named index from @svc/table
 * (no `index/*` wildcard, so a new index is a reviewed change here too).
 */
export function grantTableAccess(table: ITable, grantee: IGrantable, access: TableAccess): void {
  if (access === 'none') return;
  const actions: string[] = [...TABLE_READ_ACTIONS, ...(access === 'readWrite' ? TABLE_WRITE_ACTIONS : [])];
  grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions, resources: [table.tableArn] }));
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['dynamodb:Query'],
      resources: Object.values(INDEXES).map((index) => `${table.tableArn}/index/${index.name}`),
    }),
  );
}
