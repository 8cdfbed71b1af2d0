import { DOMAINS, type DomainName, platformBundling, RECEIPT_FONT_FILES } from '@svc/api';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Alias, type IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';
import { REPO_ROOT } from './repo-paths';
import { ServiceFunction } from './service-function';
import { grantTableAccess, type TableAccess, type TableGrant, tableAccessFor, tableGrantFor } from './table-access';

/**
 * Values a domain's bundle carries, fixed when it is bundled: the platform function serves the API
 * description built from the route table then, instead of bundling every domain to build it.
 */
const BUNDLE_TIME: Partial<Record<DomainName, () => ReturnType<typeof platformBundling>>> = {
  platform: () => platformBundling(REPO_ROOT),
  // The PDFs' fonts, read beside the code (services/receipts/src/documents/font-files.ts); the
  // portal serves a donor's receipts too.
  receipts: () => ({ define: {}, alias: {}, files: { ...RECEIPT_FONT_FILES } }),
  portal: () => ({ define: {}, alias: {}, files: { ...RECEIPT_FONT_FILES } }),
};

/**
 * Functions that wait on a payment provider get the most an HTTP API integration allows (30 s):
 * the Stripe calls' budget (payments' stripe-config.ts, STRIPE_CONFIRM_TIMEOUT_MS) is sized to
 * end inside 29 s. The others keep ServiceFunction's default.
 */
export const DOMAIN_TIMEOUTS: Partial<Record<DomainName, Duration>> = {
  payments: Duration.seconds(29),
};

/**
 * The alias API Gateway invokes instead of the function itself, for the domains listed in
 * ALIASED_DOMAINS. Provisioned concurrency (`pnpm ops prewarm`) can only be put on a published
 * version or an alias, and warms nothing unless that is what the API calls. Every deploy that
 * changes the function publishes a version and moves the alias to it; Lambda moves the alias's
 * provisioned concurrency to the new version (docs/operations.md, "Prewarming for a known date").
 */
export const LIVE_ALIAS = 'live';
/** How old a hot read (the calling client, the account paid into) may be in a deployed stage. */
export const HOT_READ_SECONDS = 1;
export const ALIASED_DOMAINS: ReadonlySet<DomainName> = new Set<DomainName>(['payments']);

export interface DomainFunctionProps {
  domain: DomainName;
  stage: StageConfig;
  table: ITable;
  /** Variables only this domain reads (identity: the signing key secret). */
  environment?: Record<string, string>;
}

/**
 * A domain's one Lambda, behind all of its routes: the entry and memory come from DOMAINS, the
 * table access from the route table (see tableAccessFor), narrowed where the domain's code is
 * known to need less (tableGrantFor); the environment is what the code reads.
 */
export class DomainFunction extends ServiceFunction {
  readonly domain: DomainName;
  readonly tableAccess: TableAccess;
  /** The table and index actions granted: the tier above, or less. */
  readonly tableGrant: TableGrant;
  /** The `live` alias of an ALIASED_DOMAINS domain, on the version published by this deploy. */
  readonly alias: Alias | undefined;

  constructor(scope: Construct, id: string, props: DomainFunctionProps) {
    const { domain, stage, table } = props;
    const { entry, memoryMb } = DOMAINS[domain];
    super(scope, id, {
      entry,
      memoryMb,
      description: `svc fundraising ${domain} domain (${stage.name})`,
      environment: {
        SVC_TABLE_NAME: table.tableName,
        SVC_STAGE: stage.name,
        SVC_SIMULATED_PROVIDER: stage.simulatedProvider,
        POWERTOOLS_SERVICE_NAME: domain,
        // Per-caller limits (packages/http middleware/rate-limit.ts): perSecond/burst.
        SVC_CLIENT_RATE_LIMIT: `${stage.rateLimits.client.perSecond}/${stage.rateLimits.client.burst}`,
        SVC_CREDENTIALS_RATE_LIMIT: `${stage.rateLimits.credentials.perSecond}/${stage.rateLimits.credentials.burst}`,
        // The calling client and the account paid into, remembered a second per container (no hot
        // read key at a peak: @svc/table getRecentItem, docs/load-model.md).
        SVC_HOT_READ_SECONDS: String(HOT_READ_SECONDS),
        ...props.environment,
      },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
      ...(BUNDLE_TIME[domain] ? { bundleTime: BUNDLE_TIME[domain]() } : {}),
      ...(DOMAIN_TIMEOUTS[domain] ? { timeout: DOMAIN_TIMEOUTS[domain] } : {}),
    });
    this.domain = domain;
    this.tableAccess = tableAccessFor(domain);
    this.tableGrant = tableGrantFor(domain);
    grantTableAccess(table, this.role, this.tableGrant);
    if (ALIASED_DOMAINS.has(domain)) {
      const version = this.function.currentVersion;
      // Replaced versions are deleted once the alias has moved on (CDK keeps them by default):
      // a stage keeps no code of the past beside it (infra/test/retention.test.ts).
      version.applyRemovalPolicy(RemovalPolicy.DESTROY);
      this.alias = new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version });
    } else {
      this.alias = undefined;
    }
  }

  /** What API Gateway invokes for this domain's routes: the alias where there is one. */
  get invoked(): IFunction {
    return this.alias ?? this.function;
  }
}

/** DOMAINS' keys, typed: every domain listed there gets a function, new ones included. */
export function domainNames(): DomainName[] {
  return Object.keys(DOMAINS).filter((name): name is DomainName => name in DOMAINS);
}
