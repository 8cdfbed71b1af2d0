import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

/**
 * Everything that differs between deployed stages. Stacks read only this; a stage is never
 * recognised by its name inside a construct, so what runs in prod is what was tested in dev.
 */
export const STAGE_NAMES = ['dev', 'staging', 'prod'] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** EventBridge Scheduler's rate syntax, checked by the compiler rather than at deploy time. */
export type RateExpression = `rate(${number} ${'minute' | 'minutes' | 'hour' | 'hours' | 'day' | 'days'})`;

export interface AlarmConfig {
  /** Off where nobody is paged: alarms nobody watches only cost money. */
  enabled: boolean;
  /** API Gateway 5xx responses per five minutes that breach. */
  apiServerErrors: number;
  /** Errors of any one function per five minutes that breach. */
  functionErrors: number;
  /** The API's p99 latency (ms, over five minutes) that breaches. */
  apiP99LatencyMs: number;
  /** The share of live payments that fail (declines and errors, over 30 minutes) that breaches. */
  declineRate: number;
  /** The share of the billing run's charge attempts that fail (over 30 minutes) that breaches. */
  chargeFailureRate: number;
  /**
   * Who hears of an alarm (firing and OK): e-mail addresses subscribed to the stage's alarm topic
   * (each confirms once, from the e-mail AWS sends), and SNS topics of a chat or paging
   * integration, notified directly. Set before the first deploy of a stage with alarms.
   */
  notify?: { emails?: readonly string[]; topicArns?: readonly string[] };
}

export interface CustomDomainConfig {
  /** e.g. `api.example.org`; DNS stays outside this app (no hosted-zone lookups offline). */
  name: string;
  /**
   * ACM certificate for `name`: in the stack's region where the API Gateway serves the domain,
   * in us-east-1 where the stage has an `edge` (CloudFront takes certificates from there only).
   */
  certificateArn: string;
}

/**
 * An AWS WAF rate-based rule: at most `limit` requests from one client address within the last
 * `windowSeconds`. AWS WAF allows windows of 60, 120, 300 or 600 s and a limit of at least 10
 * (https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-high-level-settings.html).
 */
export interface AddressRateRule {
  limit: number;
  windowSeconds: 60 | 120 | 300 | 600;
}

/**
 * The edge in front of the HTTP API: a CloudFront distribution with an AWS WAF web ACL
 * (infra/constructs/edge.ts, edge-firewall.ts; docs/operations.md "Edge"). HTTP APIs cannot take a
 * web ACL themselves. Each limit counts per client address as CloudFront sees it, before API
 * Gateway's stage throttle (which all callers share) is reached.
 */
export interface EdgeConfig {
  /** Every request but the provider callbacks (Stripe's and Adyen's few sending addresses carry every organisation's events). */
  perAddress: AddressRateRule;
  /** `POST /oauth2/token`: each call hashes a client secret (scrypt). */
  tokenRoute: AddressRateRule;
  /** The routes without a bearer token a person's browser calls: hosted pages, onboarding links, existence check, 3-D Secure stand-ins, provider returns. */
  unauthenticated: AddressRateRule;
  /**
   * Bump to rotate the origin secret CloudFront sends the API (`x-svc-origin-verify`) on the next
   * deploy: a new secret replaces the old one in the distribution and the functions together.
   */
  originSecretRotation: number;
}

export interface StageConfig {
  name: StageName;
  logRetention: RetentionDays;
  /**
   * Applies to the table, the secrets, the keys, the reconciliation buckets, the queues and every
   * log group (the search cluster is snapshotted instead: see search-engine.ts). Where data is
   * kept it is RETAIN_ON_UPDATE_OR_DELETE (CloudFormation's `RetainExceptOnCreate`): kept when the
   * stack is deleted or the resource replaced, but removed when the create that made it rolls
   * back, so a failed first deploy leaves no named leftovers and can simply be run again.
   * infra/test/retention.test.ts lists what each stage keeps and why.
   */
  removalPolicy: RemovalPolicy;
  pointInTimeRecovery: boolean;
  deletionProtection: boolean;
  alarms: AlarmConfig;
  /** Stage-wide API Gateway throttle (requests per second and burst): the hard ceiling of the API. */
  throttle: { rateLimit: number; burstLimit: number };
  /**
   * Per-caller limits (docs/API.md "Rate limits"): `client` per client id on authenticated
   * routes, `credentials` per source address on the token route (each call hashes a secret with
   * scrypt), both kept by the functions, approximately (packages/http middleware/rate-limit.ts);
   * `tokenRoute` is API Gateway's own throttle of POST /oauth2/token, all callers together.
   */
  rateLimits: {
    client: { perSecond: number; burst: number };
    credentials: { perSecond: number; burst: number };
    tokenRoute: { rateLimit: number; burstLimit: number };
  };
  /** How often the billing run starts (EventBridge Scheduler). */
  billingSchedule: RateExpression;
  /** Where the stage's e-mail comes from (Amazon SES, API v2; infra/constructs/mail.ts). */
  mail: MailConfig;
  /**
   * Bump to rotate the JWT signing key on the next deploy: a new key signs, the previous one
   * keeps verifying tokens it issued until they expire.
   */
  signingKeyRotation: number;
  domain?: CustomDomainConfig;
  /** CloudFront and AWS WAF in front of the API (staging, prod); none serves the API directly (dev, local). */
  edge?: EdgeConfig;
  /**
   * Every function's AWS SDK calls, outbound HTTPS requests and handler as X-Ray subsegments
   * (Powertools Tracer, SVC_TRACE_CALLS) inside the invocation segment every stage records. It
   * costs about 28 ms of each cold start (the X-Ray SDK), so only where someone reads the traces.
   */
  traceCalls: boolean;
  /**
   * The captcha in front of the hosted onboarding page's e-mail step and `GET /users/exists`:
   * - `recaptcha`: Google reCAPTCHA. Register the stage's domain in the reCAPTCHA admin console;
   *   its site key is public (the page embeds it): put it in `siteKey` here or give it at synth
   *   as context, `-c captchaSiteKey.<stage>=<key>`. Synth fails while a reCAPTCHA stage has
   *   none. The secret key goes into the stack's CaptchaSecret (`pnpm ops captcha configure`).
   * - `off`: no captcha. The page shows no widget and the existence check answers without a
   *   solved captcha, so anyone can learn whether an address has a user: for stages whose data
   *   is made up (dev), never where real users sign up.
   */
  captcha: CaptchaConfig;
  /**
   * Bank-file retention, in days: how long the reconciliation bucket keeps what organisations
   * uploaded (`uploads/`), the per-row results made from it (`reports/`) and the bucket's access
   * logs. An overwritten or expired file stays recoverable as a noncurrent version for 30 days more.
   */
  reconciliationRetentionDays: number;
  /**
   * Receipt documents' retention, in days: how long the receipts bucket keeps each receipt's PDF
   * (and a noncurrent version of one, should one ever be overwritten). Donation receipts are tax
   * records: prod keeps them ten years and a little (Swiss OR art. 958f and German AO § 147 keep
   * business records ten years; HMRC wants Gift Aid records six); test stages keep them briefly.
   */
  receiptRetentionDays: number;
  /**
   * Origins whose browsers may POST files to the reconciliation bucket (its CORS rule); default
   * `['*']` (DEFAULT_RECONCILIATION_UPLOAD_ORIGINS). CORS is not the guard here: an upload is
   * accepted only with a presigned policy the API signed for one organisation's prefix, a size
   * range and 15 minutes, whatever page sends it. Narrow it to the dashboards' origins if wanted.
   */
  reconciliationUploadOrigins?: readonly string[];
  /**
   * The search engine's Aurora PostgreSQL Serverless v2 capacity, in ACUs: 0 lets a quiet dev
   * cluster pause (the first search after a pause waits for it to resume, about 15 s); more
   * capacity is the first step for larger organisations, read replicas the next.
   */
  search: { minCapacity: number; maxCapacity: number; backupRetentionDays: number };
  /**
   * What the simulated provider (no money moves) may take: `all` payments, or `test-mode-only`,
   * where a live payment on a simulated profile is a 400 (SVC_SIMULATED_PROVIDER). Real payments
   * need a real provider's profile (Stripe).
   */
  simulatedProvider: 'all' | 'test-mode-only';
  /**
   * Requests a second the shared limiter lets go to each provider, per mode (`live`, `test`) and,
   * under `accounts`, per provider account (a Stripe connected account id, an Adyen merchant
   * account; `platform` is the platform's own): an account's own figure before its provider's.
   * A deploy puts it into SVC_PROVIDER_RATE_LIMITS on every function that takes provider calls
   * (services/payments/src/providers/provider-rate-limits.ts has the providers' documented
   * figures). Raise it only after the provider has raised its own; between deploys
   * `pnpm ops providers:limits` overrides it at run time (docs/operations.md, "Provider rate limits").
   */
  providerRateLimits: ProviderRateLimitsConfig;
}

/** A provider's limits in one mode each; the shape SVC_PROVIDER_RATE_LIMITS takes. */
export interface ProviderModeLimits {
  live?: number;
  test?: number;
}
export type ProviderRateLimitsConfig = Readonly<
  Record<string, ProviderModeLimits & { accounts?: Readonly<Record<string, ProviderModeLimits>> }>
>;

/**
 * The stage's sending identity in Amazon SES: a domain (or one address) verified in SES in the
 * stack's region before the first deploy (docs/operations.md, "Mail"); the mail worker may send
 * only from it (`ses:SendEmail` on `arn:aws:ses:<region>:<account>:identity/<identity>` alone).
 */
export interface MailConfig {
  /** The verified identity: `mail.example.org`, or one address. */
  identity: string;
  /** The From address: at the identity's domain, or the identity itself. */
  from: string;
}

/** Where a stage names no upload origins: any page may post, the presigned policy decides. */
export const DEFAULT_RECONCILIATION_UPLOAD_ORIGINS: readonly string[] = ['*'];

/** A stage that cannot be deployed as configured: synth stops with this message alone. */
export class StageConfigurationError extends Error {
  override name = 'StageConfigurationError';
}

export type CaptchaConfig = { verifier: 'recaptcha'; siteKey?: string } | { verifier: 'off' };

/** The synth-time context key that gives a stage its reCAPTCHA site key (StageConfig.captcha). */
export const captchaSiteKeyContext = (stage: StageName) => `captchaSiteKey.${stage}`;

/**
 * The synth-time context keys that put one synth of a stage on another existing table (a
 * rehearsal) over the one infra/config/adopted-tables.json names, where `pnpm ops table:adopt`
 * records a restored table for every deploy (docs/operations.md, "Restoring the table"): the
 * name, and the ARN of its stream.
 */
export const existingTableContext = (stage: StageName) => `table.${stage}`;
export const existingTableStreamContext = (stage: StageName) => `tableStream.${stage}`;

/**
 * The synth-time context key that gives a stage with alarms whom they notify: e-mail addresses
 * and SNS topic ARNs, comma-separated (`-c alarmsNotify.prod=ops@example.org,arn:aws:sns:…`),
 * added to `alarms.notify`.
 */
export const alarmsNotifyContext = (stage: StageName) => `alarmsNotify.${stage}`;

export const STAGES: Readonly<Record<StageName, StageConfig>> = {
  dev: {
    name: 'dev',
    logRetention: RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
    pointInTimeRecovery: false,
    deletionProtection: false,
    alarms: {
      enabled: false,
      apiServerErrors: 10,
      functionErrors: 10,
      apiP99LatencyMs: 5_000,
      declineRate: 0.5,
      chargeFailureRate: 0.5,
    },
    throttle: { rateLimit: 50, burstLimit: 100 },
    rateLimits: {
      client: { perSecond: 25, burst: 50 },
      credentials: { perSecond: 2, burst: 5 },
      tokenRoute: { rateLimit: 5, burstLimit: 10 },
    },
    billingSchedule: 'rate(15 minutes)',
    // Stripe's defaults: 25 POST /v1/payment_intents a second per account, less room for retries.
    providerRateLimits: { stripe: { live: 22, test: 20 } },
    signingKeyRotation: 1,
    // Made-up data only: the hosted page works as soon as dev is deployed.
    captcha: { verifier: 'off' },
    traceCalls: false,
    // Replace with the domain verified in SES for the stage before its first deploy.
    mail: { identity: 'dev.mail.svc-fundraising.example', from: 'no-reply@dev.mail.svc-fundraising.example' },
    reconciliationRetentionDays: 30,
    receiptRetentionDays: 30,
    search: { minCapacity: 0, maxCapacity: 2, backupRetentionDays: 1 },
    simulatedProvider: 'all',
  },
  staging: {
    name: 'staging',
    logRetention: RetentionDays.ONE_MONTH,
    // Staging holds the data a release is rehearsed on: kept on stack deletion and recoverable
    // like prod's; only prod refuses deletion outright.
    removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    pointInTimeRecovery: true,
    deletionProtection: false,
    alarms: {
      enabled: true,
      apiServerErrors: 10,
      functionErrors: 5,
      apiP99LatencyMs: 5_000,
      declineRate: 0.5,
      chargeFailureRate: 0.5,
    },
    throttle: { rateLimit: 100, burstLimit: 200 },
    rateLimits: {
      client: { perSecond: 50, burst: 100 },
      credentials: { perSecond: 5, burst: 10 },
      tokenRoute: { rateLimit: 10, burstLimit: 20 },
    },
    billingSchedule: 'rate(15 minutes)',
    // Stripe's defaults: 25 POST /v1/payment_intents a second per account, less room for retries.
    providerRateLimits: { stripe: { live: 22, test: 20 } },
    signingKeyRotation: 1,
    // About 1.3x what one client may send (50/s); the token route a few a second; a browser's
    // pages about 1 a second over five minutes. docs/operations.md "Edge" explains each number.
    edge: {
      perAddress: { limit: 4_000, windowSeconds: 60 },
      tokenRoute: { limit: 150, windowSeconds: 300 },
      unauthenticated: { limit: 300, windowSeconds: 300 },
      originSecretRotation: 1,
    },
    captcha: { verifier: 'recaptcha' },
    traceCalls: true,
    mail: { identity: 'staging.mail.svc-fundraising.example', from: 'no-reply@staging.mail.svc-fundraising.example' },
    reconciliationRetentionDays: 90,
    receiptRetentionDays: 90,
    search: { minCapacity: 0.5, maxCapacity: 4, backupRetentionDays: 7 },
    simulatedProvider: 'all',
  },
  prod: {
    name: 'prod',
    logRetention: RetentionDays.ONE_YEAR,
    removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    pointInTimeRecovery: true,
    deletionProtection: true,
    alarms: {
      enabled: true,
      apiServerErrors: 5,
      functionErrors: 1,
      apiP99LatencyMs: 3_000,
      declineRate: 0.3,
      chargeFailureRate: 0.3,
    },
    throttle: { rateLimit: 500, burstLimit: 1000 },
    // One client may take half the API; a telethon's form backend is given more for the day
    // (docs/operations.md). Tokens live an hour, so 50 a second serve every client there is.
    rateLimits: {
      client: { perSecond: 250, burst: 500 },
      credentials: { perSecond: 10, burst: 20 },
      tokenRoute: { rateLimit: 50, burstLimit: 100 },
    },
    billingSchedule: 'rate(15 minutes)',
    // Stripe's defaults: 25 POST /v1/payment_intents a second per account, less room for retries.
    providerRateLimits: { stripe: { live: 22, test: 20 } },
    signingKeyRotation: 1,
    // About 1.3x what one client may send (250/s): raised with rateLimits.client for a telethon
    // (docs/operations.md "Prewarming"). Tokens live an hour: 2 a second from one address serve
    // hundreds of form-backend containers. Pages: 2 a second over five minutes per address,
    // for donors behind one carrier NAT returning from 3-D Secure.
    edge: {
      perAddress: { limit: 20_000, windowSeconds: 60 },
      tokenRoute: { limit: 600, windowSeconds: 300 },
      unauthenticated: { limit: 600, windowSeconds: 300 },
      originSecretRotation: 1,
    },
    captcha: { verifier: 'recaptcha' },
    traceCalls: true,
    mail: { identity: 'mail.svc-fundraising.example', from: 'no-reply@mail.svc-fundraising.example' },
    reconciliationRetentionDays: 400,
    receiptRetentionDays: 3_700,
    search: { minCapacity: 0.5, maxCapacity: 16, backupRetentionDays: 35 },
    simulatedProvider: 'test-mode-only',
  },
};

export function isStageName(value: unknown): value is StageName {
  return typeof value === 'string' && (STAGE_NAMES as readonly string[]).includes(value);
}
