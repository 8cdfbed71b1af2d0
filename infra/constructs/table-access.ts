import { type DomainName, ENTITIES, ROUTE_TABLE, type RouteEntry } from '@svc/api';
import { INDEXES, type IndexName } from '@svc/table';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';

export type TableAccess = 'none' | 'read' | 'readWrite';

const RANK: Record<TableAccess, number> = { none: 0, read: 1, readWrite: 2 };

/** What the code sends to read (GetCommand, BatchGetCommand, QueryCommand). Nothing scans on a request path. */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;

/**
 * Put/Update/Delete, and the parts of TransactWriteItems (which IAM checks per operation:
 * "Permissions for Put, Update, Delete, and Get actions are governed by the permissions used for
 * the underlying PutItem, UpdateItem, DeleteItem, and GetItem operations. For the ConditionCheck
 * action, you can use the dynamodb:ConditionCheckItem permission",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
 */
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;

/** A transaction's ConditionCheck reads a condition and writes nothing: it is held to the read keys. */
export const CONDITION_CHECK = 'dynamodb:ConditionCheckItem';

export type TableReadAction = (typeof TABLE_READ_ACTIONS)[number] | typeof CONDITION_CHECK;
export type TableWriteAction = (typeof TABLE_WRITE_ACTIONS)[number];

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

/** A table action a function may be granted: the reads and writes above, never more. */
export type TableAction = TableReadAction | TableWriteAction;

/**
 * UpdateItem of a few attributes of items another domain owns (onboarding adds an organisation to
 * a partner client's grants, in the transaction that links them): held to those items' keys and,
 * by `dynamodb:Attributes`, to the named attributes, so the same role cannot touch the client's
 * secret hash, scopes or roles, nor create a client (no PutItem there).
 */
export interface AttributeUpdate {
  leadingKeys: readonly string[];
  /** Every top-level attribute the request names: its key, what it sets and what its condition reads. */
  attributes: readonly string[];
  why: string;
}

/**
 * What a function may do with the table, in statements IAM evaluates apart:
 * - reads (and a transaction's condition checks) on the table, and Query on the named indexes
 *   (IAM checks an index query against the index's own ARN), held to `readKeys` where known;
 * - writes, always held to `writeKeys` (dynamodb:LeadingKeys): a role writes only the partitions
 *   its code writes, and reading a partition (the authenticator's clients) never lets it write;
 * - attribute-limited updates of other items (AttributeUpdate).
 */
export interface TableGrant {
  reads: readonly TableReadAction[];
  indexes: readonly IndexName[];
  /** dynamodb:LeadingKeys patterns of reads and index queries (`ORG#*`, `SIGNING_KEYS`); absent: any key. */
  readKeys?: readonly string[];
  /**
   * dynamodb:LeadingKeys patterns of index queries (IAM matches the index's partition key value);
   * absent: the read keys; `any`: any key (a due-index shard names no entity).
   */
  indexKeys?: readonly string[] | 'any';
  writes: readonly TableWriteAction[];
  /** dynamodb:LeadingKeys patterns of writes: required wherever `writes` is not empty. */
  writeKeys: readonly string[];
  /**
   * Which of `writes` each of `writeKeys` takes (TableWrite), where they differ: a partition only
   * updated (a rate-limit counter) is granted no PutItem because another is put. Absent: every
   * action of `writes` on every key of `writeKeys`.
   */
  writeStatements?: readonly TableWrite[];
  attributeUpdates?: readonly AttributeUpdate[];
}

/**
 * Write actions on the partitions that take them: one IAM statement per set of actions, each held
 * by `dynamodb:LeadingKeys` ("access only the items where the partition key value matches",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
 * IAM allows an action only where some statement names both it and the request's keys, so a key
 * in a PutItem-only statement cannot be updated even when another statement of the role allows
 * UpdateItem on other keys. BatchWriteItem is its own action (its puts and deletes alike), and a
 * transaction's parts are checked as PutItem, UpdateItem, DeleteItem and ConditionCheckItem
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
 */
export interface TableWrite {
  actions: readonly TableWriteAction[];
  keys: readonly string[];
}

/**
 * The write statements of a grant: each partition with exactly the actions its entries name (one
 * key named in several entries takes all their actions), partitions with the same actions in one
 * statement, in the order the keys were first named. Throws where the entries and `writes`,
 * `writeKeys` disagree, so the summary fields stay the statements' union.
 */
export function writeStatementsOf(grant: TableGrant): TableWrite[] {
  const entries = grant.writeStatements ?? [{ actions: grant.writes, keys: grant.writeKeys }];
  const byKey = new Map<string, Set<TableWriteAction>>();
  for (const entry of entries) {
    for (const key of entry.keys) {
      const actions = byKey.get(key) ?? new Set<TableWriteAction>();
      for (const action of entry.actions) actions.add(action);
      byKey.set(key, actions);
    }
  }
  const statements = new Map<string, TableWrite & { keys: string[] }>();
  for (const [key, actions] of byKey) {
    if (actions.size === 0) continue;
    const ordered = TABLE_WRITE_ACTIONS.filter((action) => actions.has(action));
    const id = ordered.join(',');
    const statement = statements.get(id) ?? { actions: ordered, keys: [] };
    statement.keys.push(key);
    statements.set(id, statement);
  }
  const found = [...statements.values()];
  const actions = new Set(found.flatMap((statement) => statement.actions));
  const keys = new Set(found.flatMap((statement) => statement.keys));
  if (
    actions.size !== new Set(grant.writes).size ||
    grant.writes.some((action) => !actions.has(action)) ||
    keys.size !== new Set(grant.writeKeys).size ||
    grant.writeKeys.some((key) => !keys.has(key))
  ) {
    throw new Error("A table grant's writeStatements must name exactly its writes and writeKeys");
  }
  return found;
}

/** A grant's write fields from its statements: the union of their actions and keys. */
export function writeGrant(...statements: TableWrite[]): Pick<TableGrant, 'writes' | 'writeKeys' | 'writeStatements'> {
  return {
    writes: TABLE_WRITE_ACTIONS.filter((action) => statements.some((statement) => statement.actions.includes(action))),
    writeKeys: [...new Set(statements.flatMap((statement) => statement.keys))],
    writeStatements: statements,
  };
}

/** Every action a grant names on the table (reads, writes, attribute-limited updates). */
export function tableActionsOf(grant: TableGrant): TableAction[] {
  return [
    ...new Set<TableAction>([
      ...grant.reads,
      ...grant.writes,
      ...(grant.attributeUpdates?.length ? (['dynamodb:UpdateItem'] as const) : []),
    ]),
  ];
}

const ALL_INDEXES = Object.keys(INDEXES).filter((name): name is IndexName => name in INDEXES);

/** What each tier allows: the most a domain at that tier may hold. */
const TIER_CEILING: Record<TableAccess, { actions: readonly TableAction[]; indexes: readonly IndexName[] }> = {
  none: { actions: [], indexes: [] },
  read: { actions: [...TABLE_READ_ACTIONS], indexes: ALL_INDEXES },
  readWrite: { actions: [...TABLE_READ_ACTIONS, CONDITION_CHECK, ...TABLE_WRITE_ACTIONS], indexes: ALL_INDEXES },
};

/** The authenticator of every token route reads the caller's client and the public signing keys; it writes neither. */
export const AUTHENTICATOR_KEYS = ['CLIENT#*', 'SIGNING_KEYS'] as const;
/** An authenticated POST keeps an idempotency record per Idempotency-Key (@svc/http): Put, then Update. */
const IDEMPOTENCY_KEYS = partitionsOf('idempotency_record');
const IDEMPOTENCY_WRITES: readonly TableWriteAction[] = ['dynamodb:PutItem', 'dynamodb:UpdateItem'];
/**
 * A limited route (every authenticated one, and every one without a token but those limited per
 * instance only, `public-read`) adds to its caller's per-second item and reads it (@svc/http
 * middleware/rate-limit.ts): UpdateItem and GetItem.
 */
const RATE_LIMIT_KEYS = ['RATE_LIMIT#*'] as const;
/** The counter is one ADD (UpdateItem) per request, never a put: no role may put or delete one. */
const RATE_LIMIT_WRITES: readonly TableWriteAction[] = ['dynamodb:UpdateItem'];

/**
 * What a domain's own code sends, and to which partitions: the partitions it writes (`writeKeys`),
 * and those it only reads (`readKeys`; it reads what it writes too). Kept equal to the code by the
 * IAM conformance test (test/iam), which checks every call the test suite makes against the grants
 * in the synthesised template, and fails on a write partition no call used. The route table sets
 * the ceiling (tableGrantFor refuses a scope beyond the tier it implies) and adds what every domain
 * of its kind needs (AUTHENTICATOR_KEYS to read, IDEMPOTENCY_KEYS to write).
 */
interface DomainScope {
  reads: readonly TableReadAction[];
  indexes: readonly IndexName[];
  readKeys: readonly string[];
  /** The actions its code sends to every partition of `writeKeys`. */
  writes: readonly TableWriteAction[];
  writeKeys: readonly string[];
  /**
   * Partitions written with other actions than `writes` (or more of them), each with exactly the
   * actions its code sends there: a statement of their own (writeStatementsOf).
   */
  alsoWrites?: readonly TableWrite[];
  /**
   * The index partition keys its queries name (`ORG#<org>#SUPPORTERS#<shard>`), held by
   * dynamodb:LeadingKeys on the index statement as the read keys are on the table's.
   */
  indexKeys?: readonly string[];
  /**
   * Partitions it writes and never reads (a conditional write needs no read grant for its
   * condition, nor an update for the values it returns): left out of its read keys, which are
   * otherwise every partition it writes.
   */
  writesUnread?: readonly string[];
  attributeUpdates?: readonly AttributeUpdate[];
}

/**
 * The `dynamodb:LeadingKeys` patterns of described item types, by their `entity` name: made from
 * each type's description (`defineEntity` in @svc/table, listed in docs/access-patterns.md), so a
 * grant names what it writes and the prefix is written in one place. Types not yet described are
 * named by their pattern.
 */
export function partitionsOf(...names: string[]): string[] {
  return [
    ...new Set(
      names.flatMap((name) => {
        const entity = ENTITIES.find((described) => described.description.name === name);
        if (!entity) throw new Error(`No entity description named ${name}`);
        return entity.leadingKeys;
      }),
    ),
  ];
}

const READS: readonly TableReadAction[] = ['dynamodb:GetItem', 'dynamodb:BatchGetItem'];

const SCOPES: Partial<Record<DomainName, DomainScope>> = {
  /**
   * Clients, read by the token route (and by the authenticator); the only write is the signing keys'
   * public halves. Clients themselves are written by the operator tool (`pnpm ops clients:*`), with
   * the operator's credentials, never by a function.
   */
  identity: {
    reads: READS,
    indexes: [],
    readKeys: partitionsOf('client'),
    writes: ['dynamodb:PutItem'],
    writeKeys: partitionsOf('signing_keys'),
  },
  /**
   * Organisations, their accounts and addresses (Query in the organisation's partition); the
   * operator's approval is a guarded Put. Lists on gsi1.
   */
  organisations: {
    reads: [...READS, 'dynamodb:Query'],
    indexes: ['gsi1'],
    indexKeys: ['ORG#*'],
    readKeys: ['ACCOUNT#*'],
    writes: ['dynamodb:PutItem'],
    writeKeys: partitionsOf('organisation'),
  },
  /**
   * Payments, sources, provider events and customers; reads the account and organisation it pays
   * into; a payment that starts a subscription writes it, and one with a supporter writes that
   * supporter. Lists come from the search engine, so no index.
   */
  payments: {
    reads: READS,
    indexes: [],
    // A recurring charge the provider settles, returns or pays late is dunned by its plan's rules
    // (subscriptions' settle, reopenReturnedDebit, through the port): the plan is read here too.
    readKeys: ['ORG#*', 'ACCOUNT#*', ...partitionsOf('subscription_plan')],
    // Versioned puts (alone or in a transaction): the payment's items, the provider's events and
    // customers, the supporter and subscription a payment starts, the route a payment took.
    writes: ['dynamodb:PutItem'],
    writeKeys: [
      ...partitionsOf('payment', 'payment_source'),
      ...partitionsOf('provider_event', 'provider_customer', 'supporter', 'subscription'),
      ...partitionsOf('payment_route'),
    ],
    // The limiter's counts are added to and read back in the same UpdateItem (ReturnValues).
    writesUnread: partitionsOf('provider_rate'),
    alsoWrites: [
      {
        // Counters and lists changed in place, never put: the shared circuit of each provider and
        // the limiter's counts (repository/provider-health-repository.ts, provider-rate-repository.ts),
        // provider callbacks that came before their payment (domain/early-callback-store.ts).
        actions: ['dynamodb:UpdateItem'],
        keys: partitionsOf('provider_health', 'provider_rate', 'early_callback'),
      },
    ],
  },
  /** Supporters (an organisation's on gsi1) and the subscriptions a supporter's view shows. */
  supporters: {
    reads: READS,
    indexes: ['gsi1'],
    // Sharded (…#SUPPORTERS#<shard>) and as written before sharding (…#SUPPORTERS): the recorded
    // calls showed the list reading both, which ORG#*#SUPPORTERS#* alone refused.
    indexKeys: ['ORG#*#SUPPORTERS*'],
    // No subscription is read by the supporters' code (the full run of 2026-11-29 recorded none).
    readKeys: ['ORG#*'],
    writes: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
    writeKeys: partitionsOf('supporter'),
  },
  /**
   * Plans, subscriptions and their invoices (Query in the subscription's partition; an
   * organisation's on gsi1), with the payments, sources and supporters they name.
   */
  subscriptions: {
    reads: [...READS, 'dynamodb:Query'],
    indexes: ['gsi1'],
    indexKeys: ['ORG#*#PLANS'],
    readKeys: ['ACCOUNT#*', 'PAYMENT_SOURCE#*', 'SUPPORTER#*'],
    // Versioned puts; a charge taken now is a payment.
    writes: ['dynamodb:PutItem'],
    writeKeys: partitionsOf('subscription_plan', 'subscription', 'invoice', 'payment'),
    alsoWrites: [
      {
        // The organisation's default plan is marked by an item in the organisation's partition,
        // put and released (deleted) by the plan that holds it (repository/subscription-repository.ts;
        // LeadingKeys cannot tell sort keys apart: docs/security.md).
        actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
        keys: partitionsOf('default_plan'),
      },
    ],
  },
  /** Endpoints (gsi1 by organisation, gsi2 by URL), subscriptions, deliveries and their responses. */
  webhooks: {
    reads: READS,
    indexes: ['gsi1', 'gsi2'],
    indexKeys: [
      'ORG#*#WEBHOOKS',
      'ORG#*#EVENT_SUBSCRIPTIONS',
      // Responses' lists, sharded (…#<shard>) and as written before sharding (no suffix).
      'ORG#*#WEBHOOK_RESPONSES*',
      'ORG#*#EVENT#*',
      'WEBHOOK#*#RESPONSES*',
    ],
    readKeys: ['WEBHOOK_RESPONSE#*'],
    // Endpoints and their event subscriptions are put and deleted (guarded by their version).
    writes: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
    writeKeys: partitionsOf('webhook', 'event_subscription'),
    alsoWrites: [
      // A retried delivery is written back due: a put.
      { actions: ['dynamodb:PutItem'], keys: partitionsOf('delivery') },
      {
        // One endpoint per URL is held by a marker item in the organisation's partition (put,
        // deleted), the endpoint cap by a counter there (ADD: repository/endpoint-count.ts).
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        keys: partitionsOf('webhook_url', 'webhook_endpoint_count'),
      },
    ],
  },
  /**
   * Processes, users and partner integrations, and through organisations' and webhooks' exported
   * functions the organisations, accounts, endpoints and subscriptions an execution creates. Lists
   * on gsi1 (an organisation's integrations, the configuration's partner) and gsi2 (a partner
   * client's integrations). It adds an organisation to a partner client's grants, and nothing else
   * of a client (AttributeUpdate). No table Query, no BatchWriteItem.
   */
  onboarding: {
    reads: [...READS, CONDITION_CHECK],
    indexes: ['gsi1', 'gsi2'],
    // A configuration's partner is found on gsi1 under its configuration key.
    indexKeys: ['ONBOARDING_CONFIG#*', 'ORG#*#PARTNER_INTEGRATIONS', 'CLIENT#*#PARTNER_INTEGRATIONS'],
    readKeys: ['ONBOARDING_CONFIG#*'],
    // Puts, alone or in the execution's transactions.
    writes: ['dynamodb:PutItem'],
    writeKeys: [
      ...partitionsOf(
        'onboarding_process',
        'onboarding_token',
        'connect_ticket',
        'partner_integration',
        'partner_link',
        'user',
        'user_email',
        'organisation',
        'account',
        'webhook',
        'event_subscription',
      ),
    ],
    alsoWrites: [
      // A process counts its failed attempts in place (ADD failed_attempts: process-repository.ts).
      { actions: ['dynamodb:UpdateItem'], keys: partitionsOf('onboarding_process') },
      // The failed password checks of an address are counted, never put (user-repository.ts).
      { actions: ['dynamodb:UpdateItem'], keys: partitionsOf('password_guesses') },
      // A disabled integration frees its partner's link (integration-repository.ts).
      { actions: ['dynamodb:DeleteItem'], keys: partitionsOf('partner_link') },
    ],
    attributeUpdates: [
      {
        leadingKeys: partitionsOf('client'),
        // grantsChangeWrite (@svc/identity): SET grants, grants_version on the client's key, on
        // condition attribute_exists(pk) and grants_version.
        attributes: ['pk', 'sk', 'grants', 'grants_version'],
        why: "a partner's grants gain the organisation it onboarded, in the integration's transaction",
      },
    ],
  },
  /**
   * Its own code only reads: source configurations and reports by key, an organisation's reports
   * on gsi1. Its one authenticated POST (the deprecated blueprint execution, whose files go to the
   * bucket) keeps idempotency records. The file processor is no route's function; its grant is in
   * reconciliation.ts.
   */
  reconciliation: {
    reads: READS,
    indexes: ['gsi1'],
    indexKeys: ['ORG#*#RECON_REPORTS'],
    readKeys: ['ORG#*', 'RECON_SOURCE#*', 'RECON_REPORT#*'],
    writes: [],
    writeKeys: [],
  },
  /**
   * The donor portal: its settings, links, sessions and login counts; reads the organisation a
   * setting belongs to and the supporter a link is made for, finds a supporter by e-mail on gsi2
   * (the login) and checks, in the redeeming transaction, that the supporter's e-mail is still
   * the link's (ConditionCheck). Its mails: mail.grantQueueing.
   */
  portal: {
    reads: [...READS, CONDITION_CHECK],
    // gsi2: a supporter by e-mail (the login); gsi1: a supporter's subscriptions (its pages and API).
    indexes: ['gsi1', 'gsi2'],
    // gsi2 also: a supporter's receipts (the home page's list).
    indexKeys: ['ORG#*#SUPPORTER_EMAIL#*', 'SUPPORTER#*#SUBSCRIPTIONS', 'SUPPORTER#*#RECEIPTS'],
    // A donor's subscriptions with their plans, payment sources and accounts (a new payment method
    // is set up as POST /payment-sources sets one up).
    readKeys: [
      'ORG#*',
      'ACCOUNT#*',
      ...partitionsOf('supporter', 'subscription', 'subscription_plan', 'payment_source'),
      // A donor's receipts, the one a receipt replaced, and the settings its PDF is made with.
      ...partitionsOf('receipt', 'receipt_settings'),
    ],
    writes: ['dynamodb:PutItem'],
    // The donor's changes are the subscriptions domain's versioned puts; a new payment method is a
    // payment source (and, at Stripe, its customer); a code replaces the supporter's last one.
    writeKeys: [
      ...partitionsOf('portal_settings', 'portal_link', 'portal_session', 'portal_code'),
      ...partitionsOf('subscription', 'payment_source', 'provider_customer'),
    ],
    // The login counts are only counted (their condition needs no read).
    // The codes' guesses are counted and used by conditional UpdateItems, never read back by a Get.
    writesUnread: partitionsOf('portal_login_count', 'provider_rate', 'portal_code'),
    alsoWrites: [
      // A link redeemed (SET used_at), a session's last_seen moved, a login counted (ADD), a
      // code's guess counted and its use (conditional UpdateItems).
      {
        actions: ['dynamodb:UpdateItem'],
        keys: partitionsOf('portal_link', 'portal_session', 'portal_login_count', 'portal_code'),
      },
      // A provider's shared circuit and rate counts, as payments keeps them.
      { actions: ['dynamodb:UpdateItem'], keys: partitionsOf('provider_health', 'provider_rate') },
      // Signing out deletes the session.
      { actions: ['dynamodb:DeleteItem'], keys: partitionsOf('portal_session') },
    ],
  },
  /**
   * Receipts and Gift Aid.
   * - Receipts: the organisation a setting or batch is for (the grant check); settings put whole;
   *   a batch put (its pages are the worker's, RECEIPTS_WORKER_TABLE_GRANT); receipts read by uuid,
   *   by organisation and year (gsi1) and by supporter (gsi2); a void is a versioned put of the
   *   receipt and of the supporter's RECEIPT_OF; a PDF names the supporter and the replaced receipt.
   * - Gift Aid: a supporter read for its organisation (the grant check, and each donor of a
   *   claim), a supporter's declarations (Query in their partition), the organisation's receipt
   *   settings (a claim's country); declarations and the wording of their text versions put, a
   *   declaration's cancellation an UpdateItem. The claims' gifts come from the search engine.
   */
  receipts: {
    reads: [...READS, 'dynamodb:Query'],
    indexes: ['gsi1', 'gsi2'],
    indexKeys: ['ORG#*#RECEIPTS#*', 'SUPPORTER#*#RECEIPTS'],
    readKeys: ['ORG#*', ...partitionsOf('supporter', 'receipt_settings', 'receipt', 'receipt_of', 'receipt_batch')],
    writes: ['dynamodb:PutItem'],
    writeKeys: [
      ...partitionsOf('receipt_settings', 'receipt_batch', 'receipt', 'receipt_of'),
      ...partitionsOf('gift_aid_declaration', 'gift_aid_text'),
    ],
    alsoWrites: [{ actions: ['dynamodb:UpdateItem'], keys: partitionsOf('gift_aid_declaration') }],
  },
};

/**
 * The grant of a domain's function: its scope (SCOPES) plus what its routes imply (the
 * authenticator's keys to read for token routes, idempotency records to write for authenticated
 * POSTs), within its tier (tableAccessFor). Throws if a scope would grant anything the tier does
 * not, or if a domain with table access has no scope (its writes would reach every partition).
 */
export function tableGrantFor(domain: DomainName, routes: readonly RouteEntry[] = ROUTE_TABLE): TableGrant {
  const access = tableAccessFor(domain, routes);
  const ceiling = TIER_CEILING[access];
  const scope = SCOPES[domain];
  if (!scope) {
    if (access === 'none') return { reads: [], indexes: [], writes: [], writeKeys: [] };
    throw new Error(
      `${domain} has ${access} table access and no scope in table-access.ts: name the keys it reads and writes`,
    );
  }
  const own = routes.filter((entry) => entry.domain === domain);
  const authenticated = own.some((entry) => entry.route.auth === 'token');
  const idempotent = own.some(
    (entry) => entry.route.auth === 'token' && entry.route.method === 'POST' && !entry.route.readOnly,
  );
  const limited =
    authenticated || own.some((entry) => entry.route.auth === 'none' && entry.route.limit !== 'public-read');
  // Each partition with the actions its code sends there: the scope's, then the idempotency
  // records' (Put, then Update) and the rate-limit counters' (Update only: they are never put).
  const { writes, writeKeys, writeStatements } = writeGrant(
    ...[
      { actions: scope.writes, keys: scope.writeKeys },
      ...(scope.alsoWrites ?? []),
      ...(idempotent ? [{ actions: IDEMPOTENCY_WRITES, keys: IDEMPOTENCY_KEYS }] : []),
      ...(limited ? [{ actions: RATE_LIMIT_WRITES, keys: RATE_LIMIT_KEYS }] : []),
    ].filter((statement) => statement.actions.length > 0 && statement.keys.length > 0),
  );
  const unread = new Set([...(scope.writesUnread ?? []), ...IDEMPOTENCY_KEYS]);
  const grant: TableGrant = {
    reads: scope.reads,
    indexes: scope.indexes,
    // What it writes and reads back (a guarded write reads the version first), and the caller's
    // client; never the idempotency records, which the middleware only puts and updates.
    readKeys: [
      ...new Set([
        ...scope.readKeys,
        ...(writeKeys ?? []).filter((key) => !unread.has(key)),
        ...(authenticated ? AUTHENTICATOR_KEYS : []),
      ]),
    ],
    ...(scope.indexKeys ? { indexKeys: scope.indexKeys } : {}),
    writes: writes ?? [],
    writeKeys: writeKeys ?? [],
    ...(writeStatements && writeStatements.length > 1 ? { writeStatements } : {}),
    ...(scope.attributeUpdates ? { attributeUpdates: scope.attributeUpdates } : {}),
  };
  const beyond = [
    ...tableActionsOf(grant).filter((action) => !ceiling.actions.includes(action)),
    ...scope.indexes.filter((index) => !ceiling.indexes.includes(index)).map((index) => `Query on ${index}`),
  ];
  if (beyond.length > 0) {
    throw new Error(`The table grant of ${domain} names ${beyond.join(', ')}, beyond its route-derived ${access}`);
  }
  return grant;
}

/** The IAM condition that holds a statement to partition keys (none: any key). */
export function leadingKeysCondition(leadingKeys: readonly string[] | undefined) {
  return leadingKeys === undefined
    ? undefined
    : { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...leadingKeys] } };
}

/**
 * The return values an attribute-limited update may ask for: never the whole item (ALL_OLD,
 * ALL_NEW would hand back the attributes it may not touch). AWS's example of attribute-limited
 * writes holds `dynamodb:ReturnValues` the same way
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
 */
const LIMITED_RETURN_VALUES = ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] as const;

/**
 * Grants exactly `grant` on the table and, for queries, on each named index from @svc/table
 * (no `index/*` wildcard, so a new index is a reviewed change here too): reads held to the read
 * keys, writes in a statement of their own held to the write keys, and each attribute-limited
 * update in its own, held to its keys and attributes (`dynamodb:Attributes` with
 * ForAllValues:StringEquals: every attribute the request names must be listed; what IAM counts as
 * named for a condition expression is not stated by AWS, so the list holds every attribute the
 * code's key, update and condition name). Throws on writes without write keys.
 */
/** The table grants each grantee was given (read by the infra tests: who may write what). */
const GRANTED = new WeakMap<IGrantable, TableGrant[]>();

export function tableGrantsOf(grantee: IGrantable): readonly TableGrant[] {
  return GRANTED.get(grantee) ?? [];
}

export function grantTableAccess(table: ITable, grantee: IGrantable, grant: TableGrant): void {
  GRANTED.set(grantee, [...tableGrantsOf(grantee), grant]);
  const add = (actions: readonly string[], resources: string[], conditions?: Record<string, unknown>) =>
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...actions], resources, ...(conditions ? { conditions } : {}) }),
    );
  const readConditions = leadingKeysCondition(grant.readKeys);
  if (grant.reads.length > 0) add(grant.reads, [table.tableArn], readConditions);
  if (grant.writes.length > 0) {
    if (grant.writeKeys.length === 0) throw new Error('A table write grant needs the partition keys it may write');
    // One statement per set of actions, each held to the partitions that take exactly those.
    for (const statement of writeStatementsOf(grant)) {
      add(statement.actions, [table.tableArn], leadingKeysCondition(statement.keys));
    }
  }
  for (const update of grant.attributeUpdates ?? []) {
    add(['dynamodb:UpdateItem'], [table.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...update.leadingKeys] },
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...update.attributes] },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': [...LIMITED_RETURN_VALUES] },
    });
  }
  if (grant.indexes.length > 0) {
    add(
      ['dynamodb:Query'],
      grant.indexes.map((index) => `${table.tableArn}/index/${INDEXES[index].name}`),
      grant.indexKeys === 'any' ? undefined : grant.indexKeys ? leadingKeysCondition(grant.indexKeys) : readConditions,
    );
  }
}
