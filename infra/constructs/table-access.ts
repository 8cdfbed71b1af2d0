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
 * What a domain function may do with the table: actions on the table itself, Query on the named
 * indexes (IAM checks an index query against the index's own ARN), and, where known, only on items
 * whose partition key (or queried index partition key) matches `leadingKeys` (dynamodb:LeadingKeys).
 */
export interface TableGrant {
  tableActions: readonly TableAction[];
  indexes: readonly IndexName[];
  /** dynamodb:LeadingKeys patterns (`ORG#*`, `SIGNING_KEYS`); absent: any key. */
  leadingKeys?: readonly string[];
}

const ALL_INDEXES = Object.keys(INDEXES).filter((name): name is IndexName => name in INDEXES);

/** What each tier allows: the most a domain at that tier may hold. */
const TIER_GRANTS: Record<TableAccess, TableGrant> = {
  none: { tableActions: [], indexes: [] },
  read: { tableActions: [...TABLE_READ_ACTIONS], indexes: ALL_INDEXES },
  readWrite: { tableActions: [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS], indexes: ALL_INDEXES },
};

/** The authenticator of every token route: the caller's client, and the public signing keys. */
const AUTHENTICATOR_KEYS = ['CLIENT#*', 'SIGNING_KEYS'] as const;
/** An authenticated POST keeps an idempotency record per Idempotency-Key (@svc/http): Put, then Update. */
const IDEMPOTENCY_KEYS = ['IDEMPOTENCY#*'] as const;

/**
 * What each domain's code sends, and to which partitions: the actions, the indexes it queries, and
 * the partition keys of its repositories and of the other domains' items it reads or writes. Kept
 * equal to the code by the IAM conformance test (test/iam), which checks every call the test suite
 * makes against these grants in the synthesised template and reports grants no call used. The
 * route table still sets the ceiling (tableGrantFor refuses a scope beyond the tier it implies),
 * and adds what every domain of its kind needs (AUTHENTICATOR_KEYS, IDEMPOTENCY_KEYS).
 */
const SCOPES: Partial<Record<DomainName, Required<TableGrant>>> = {
  /** Clients (the token route reads one and writes none but the signing keys' public halves). */
  identity: {
    tableActions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem'],
    indexes: [],
    leadingKeys: [...AUTHENTICATOR_KEYS],
  },
  /**
   * Organisations, their accounts and addresses (Query in the organisation's partition); the
   * operator's approval is a guarded Put. Lists on gsi1.
   */
  organisations: {
    tableActions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem'],
    indexes: ['gsi1'],
    leadingKeys: ['ORG#*', 'ACCOUNT#*'],
  },
  /**
   * Payments, sources and provider events; reads the account and organisation it pays into; a
   * payment that starts a subscription writes it, and one with a supporter writes that supporter.
   * Lists come from the search engine, so no index.
   */
  payments: {
    tableActions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    indexes: [],
    leadingKeys: [
      'ORG#*',
      'ACCOUNT#*',
      'PAYMENT#*',
      'PAYMENT_SOURCE#*',
      'PROVIDER_EVENT#*',
      'PROVIDER_CUSTOMER#*',
      'SUPPORTER#*',
      'SUBSCRIPTION#*',
    ],
  },
  /** Supporters (an organisation's on gsi1) and the subscriptions a supporter's view shows. */
  supporters: {
    tableActions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    indexes: ['gsi1'],
    leadingKeys: ['ORG#*', 'SUPPORTER#*', 'SUBSCRIPTION#*'],
  },
  /**
   * Plans, subscriptions and their invoices (Query in the subscription's partition; an
   * organisation's on gsi1), with the payments, sources and supporters they name.
   */
  subscriptions: {
    tableActions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
    ],
    indexes: ['gsi1'],
    leadingKeys: ['ORG#*', 'ACCOUNT#*', 'PLAN#*', 'SUBSCRIPTION#*', 'PAYMENT#*', 'PAYMENT_SOURCE#*', 'SUPPORTER#*'],
  },
  /** Endpoints (gsi1 by organisation, gsi2 by URL), subscriptions, deliveries and their responses. */
  webhooks: {
    tableActions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
    ],
    indexes: ['gsi1', 'gsi2'],
    leadingKeys: ['ORG#*', 'WEBHOOK#*', 'EVENT_SUBSCRIPTION#*', 'DELIVERY#*', 'WEBHOOK_RESPONSE#*'],
  },
  /**
   * Processes, users and partner integrations, and through identity's, organisations' and
   * webhooks' exported functions the clients, organisations, accounts, endpoints and subscriptions
   * an execution creates. Lists on gsi1 (an organisation's integrations, the configuration's
   * partner) and gsi2 (a partner client's integrations). No table Query, no BatchWriteItem.
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
    leadingKeys: [
      'ONBOARDING#*',
      'ONBOARDING_TOKEN#*',
      'ONBOARDING_CONFIG#*',
      'CONNECT_TICKET#*',
      'PARTNER_INTEGRATION#*',
      'PARTNER_LINK#*',
      'USER#*',
      'USER_EMAIL#*',
      'ORG#*',
      'ACCOUNT#*',
      'WEBHOOK#*',
      'EVENT_SUBSCRIPTION#*',
    ],
  },
  /**
   * Its own code only reads: source configurations and reports by key, an organisation's reports
   * on gsi1. Its one authenticated POST (the deprecated blueprint execution, whose files go to the
   * bucket) keeps idempotency records. The file processor is no route's function; its grant is in
   * reconciliation.ts.
   */
  reconciliation: {
    tableActions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    indexes: ['gsi1'],
    leadingKeys: ['ORG#*', 'RECON_SOURCE#*', 'RECON_REPORT#*'],
  },
};

/**
 * The grant of a domain's function: its scope (SCOPES) plus what its routes imply (the
 * authenticator's keys for token routes, idempotency records for authenticated POSTs), within its
 * tier (tableAccessFor). Throws if a scope would grant anything the tier does not. A domain with
 * table access and no scope keeps its tier, on any key (a new domain, until its scope is written).
 */
export function tableGrantFor(domain: DomainName, routes: readonly RouteEntry[] = ROUTE_TABLE): TableGrant {
  const access = tableAccessFor(domain, routes);
  const ceiling = TIER_GRANTS[access];
  const scope = SCOPES[domain];
  if (!scope) return ceiling;
  const own = routes.filter((entry) => entry.domain === domain);
  const authenticated = own.some((entry) => entry.route.auth === 'token');
  const idempotent = own.some(
    (entry) => entry.route.auth === 'token' && entry.route.method === 'POST' && !entry.route.readOnly,
  );
  const tableActions = [
    ...new Set<TableAction>([
      ...scope.tableActions,
      ...(idempotent ? (['dynamodb:PutItem', 'dynamodb:UpdateItem'] as const) : []),
    ]),
  ];
  const beyond = [
    ...tableActions.filter((action) => !ceiling.tableActions.includes(action)),
    ...scope.indexes.filter((index) => !ceiling.indexes.includes(index)).map((index) => `Query on ${index}`),
  ];
  if (beyond.length > 0) {
    throw new Error(`The table grant of ${domain} names ${beyond.join(', ')}, beyond its route-derived ${access}`);
  }
  const leadingKeys = [
    ...new Set([
      ...scope.leadingKeys,
      ...(authenticated ? AUTHENTICATOR_KEYS : []),
      ...(idempotent ? IDEMPOTENCY_KEYS : []),
    ]),
  ];
  return { tableActions, indexes: scope.indexes, leadingKeys };
}

/** The IAM condition that holds a statement to the grant's partition keys (none: any key). */
function leadingKeysCondition(leadingKeys: readonly string[] | undefined) {
  return leadingKeys === undefined
    ? undefined
    : { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...leadingKeys] } };
}

/**
 * Grants exactly `grant` on the table and, for queries, on each named index from @svc/table
 * (no `index/*` wildcard, so a new index is a reviewed change here too), held to its leading keys.
 */
export function grantTableAccess(table: ITable, grantee: IGrantable, grant: TableGrant): void {
  const conditions = leadingKeysCondition(grant.leadingKeys);
  if (grant.tableActions.length > 0) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...grant.tableActions],
        resources: [table.tableArn],
        ...(conditions ? { conditions } : {}),
      }),
    );
  }
  if (grant.indexes.length > 0) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: grant.indexes.map((index) => `${table.tableArn}/index/${INDEXES[index].name}`),
        ...(conditions ? { conditions } : {}),
      }),
    );
  }
}
