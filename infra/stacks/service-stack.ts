import {
  API_URL_OUTPUT,
  CAPTCHA_SECRET_OUTPUT,
  DEAD_LETTER_QUEUE_OUTPUTS,
  type DeadLetterQueueName,
  type DomainName,
  PREWARM_OUTPUTS,
  ROUTE_TABLE,
  SEARCH_CLUSTER_OUTPUT,
  SEARCH_SECRET_OUTPUT,
  STRIPE_SECRET_OUTPUT,
  TABLE_NAME_OUTPUT,
} from '@svc/api';
import { Aspects, CfnOutput, Fn, Stack, type StackProps, Tags, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { AdoptedTable } from '../config/adopted-tables';
import {
  alarmsNotifyContext,
  captchaSiteKeyContext,
  existingTableContext,
  existingTableStreamContext,
  type StageConfig,
  StageConfigurationError,
} from '../config/stages';
import { AlarmTopic } from '../constructs/alarm-topic';
import { Billing } from '../constructs/billing';
import { TRACE_CALLS_CONTEXT } from '../constructs/bundle';
import { DomainFunction, domainNames } from '../constructs/domain-function';
import { Edge, ORIGIN_SECRET_ENV } from '../constructs/edge';
import { Events } from '../constructs/events';
import { Mail } from '../constructs/mail';
import { OperationsAlarms } from '../constructs/operations-alarms';
import { OperationsDashboard } from '../constructs/operations-dashboard';
import { PaymentResolver } from '../constructs/payment-resolver';
import { PrewarmAlarms } from '../constructs/prewarm-alarms';
import { Receipts } from '../constructs/receipts';
import { Reconciliation } from '../constructs/reconciliation';
import { SEARCH_DOMAINS, SearchEngine } from '../constructs/search-engine';
import { ServiceAlarms } from '../constructs/service-alarms';
import { ServiceApi } from '../constructs/service-api';
import { ServiceTable } from '../constructs/service-table';
import { SigningKeys } from '../constructs/signing-keys';
import { TraceCalls } from '../constructs/tracing';
import { EDGE_FIREWALL_REGION, edgeFirewallStackName, WEB_ACL_ARN_OUTPUT } from './edge-firewall-stack';

export interface ServiceStackProps extends StackProps {
  stage: StageConfig;
  /**
   * Where a stage with an `edge` reads its web ACL's ARN: the us-east-1 firewall stack and its
   * output (infra/stacks/edge-firewall-stack.ts); by default `<this stack's name>-edge-firewall`.
   */
  edgeFirewall?: { stackName: string; outputName: string };
  /**
   * The table `pnpm ops table:adopt` moved the stage onto, from infra/config/adopted-tables.json
   * (createServiceApp reads it): the stack uses it instead of making one, on every deploy.
   */
  adoptedTable?: AdoptedTable;
}

/**
 * One stage of the service: the table, one Lambda per domain behind the HTTP API, the signing
 * key, card fingerprint and captcha secrets, recurring billing (schedule, queue, worker), the event pipeline behind webhooks
 * (bus, fan-out, delivery queue and worker, sweeper, secrets key), reconciliation files (bucket,
 * notification queue, file processor), and the alarms. Everything stage-specific comes from
 * `props.stage`.
 */
export class ServiceStack extends Stack {
  readonly config: StageConfig;
  readonly table: ServiceTable;
  readonly api: ServiceApi;
  readonly functions: ReadonlyMap<DomainName, DomainFunction>;
  readonly signingKeys: SigningKeys;
  readonly cardFingerprintKey: Secret;
  /**
   * The service's hashing key (@svc/core keyed-hash): idempotency fingerprints of request bodies,
   * onboarding tokens. Every domain function reads it.
   */
  readonly hashKey: Secret;
  /**
   * Stripe's keys, `{"test_secret_key", "live_secret_key", "webhook_secret"}`: created without
   * keys, filled by `pnpm ops stripe configure`; payments and the billing worker read it.
   */
  readonly stripeSecret: Secret;
  /** The reCAPTCHA secret key of the hosted onboarding page; the operator puts it in. None where the captcha is off. */
  readonly captchaSecret: Secret | undefined;
  readonly billing: Billing;
  readonly events: Events;
  readonly reconciliation: Reconciliation;
  /** The mail queue, worker and sweeper (SES). */
  readonly mail: Mail;
  /** Receipt batches and replacements: the receipts queue, its worker, the documents' bucket. */
  readonly receipts: Receipts;
  readonly paymentResolver: PaymentResolver;
  /** Aurora PostgreSQL (Data API) for search, its schema migrations and the stream projector. */
  readonly search: SearchEngine;
  /** Where every alarm goes (stages with alarms only). */
  readonly alarmTopic?: AlarmTopic;
  /** The stage's CloudWatch dashboard (`svc-<stage>`). */
  readonly dashboard: OperationsDashboard;
  /** CloudFront and the web ACL in front of the API (stages with `edge`). */
  readonly edge: Edge | undefined;
  /** The address clients are given, with a trailing slash: the edge's where there is one, else the API's. */
  readonly publicUrl: string;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    const { stage } = props;
    this.config = stage;
    // Before any function: each builds its code as it is created, Tracer inside where calls are traced.
    this.node.setContext(TRACE_CALLS_CONTEXT, stage.traceCalls);
    Tags.of(this).add('service', 'svc-fundraising');
    Tags.of(this).add('stage', stage.name);

    const existingTable = existingTableOf(this, stage, props.adoptedTable);
    this.table = new ServiceTable(this, 'Data', { stage, ...(existingTable ? { existing: existingTable } : {}) });
    this.signingKeys = new SigningKeys(this, 'SigningKeys', { stage });
    this.cardFingerprintKey = new Secret(this, 'CardFingerprintKey', {
      description: 'HMAC key of card fingerprints (payments); rotating it changes every fingerprint',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: stage.removalPolicy,
    });
    Validations.of(this.cardFingerprintKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A fingerprint key must stay fixed: the same card has to keep the same fingerprint across payments; a rotation would silently break matching.',
    });

    this.hashKey = new Secret(this, 'HashKey', {
      description:
        'HMAC key of what the service stores to recognise a value without keeping it (request fingerprints, onboarding tokens); every domain reads it',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: stage.removalPolicy,
    });
    Validations.of(this.hashKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A hashing key must stay fixed while what was hashed under it is in use: a rotation would make every open onboarding link and in-flight idempotency key unrecognisable.',
    });

    this.stripeSecret = new Secret(this, 'StripeKeys', {
      // Every field a reader takes is named (infra/test/stripe.test.ts derives the list from the
      // readers' schemas): an operator who opens the secret sees what belongs there.
      description:
        'Payment provider keys of this stage as JSON, each field optional. Stripe: "test_secret_key", "live_secret_key", "webhook_secret" (comma-separated while rolling). Adyen: "adyen_api_key", "adyen_hmac_key" (hex, comma-separated while rolling), "adyen_live_url_prefix", "adyen_notification_username", "adyen_notification_password" (pnpm ops stripe configure sets these). The run-time provider rate limits: "provider_rate_limits" (pnpm ops providers:limits). "unset" is the placeholder the stack creates the secret with, ignored. Payments, the billing worker and the payment resolver read it',
      // No keys until the operator puts them in; the placeholder key is ignored by the reader.
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'unset', passwordLength: 16 },
      removalPolicy: stage.removalPolicy,
    });
    Validations.of(this.stripeSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Third-party API keys: Stripe issues the secret keys and the webhook signing secret, and the operator rolls them in the Stripe dashboard and puts the new ones here; a rotation Lambda cannot obtain new keys.',
    });

    if (stage.traceCalls) Aspects.of(this).add(new TraceCalls());
    const captcha = resolveCaptcha(this, stage);
    this.captchaSecret = captcha.verifier === 'recaptcha' ? this.captchaSecretResource() : undefined;

    this.search = new SearchEngine(this, 'Search', { stage, table: this.table.table });

    const capabilities = this.capabilities(captcha);
    const functions = new Map<DomainName, DomainFunction>();
    for (const domain of domainNames()) {
      const granted = capabilities.filter((capability) => capability.domains.has(domain));
      const fn = new DomainFunction(this, `Domain-${domain}`, {
        domain,
        stage,
        table: this.table.table,
        environment: Object.assign({}, ...granted.map((capability) => capability.environment)),
      });
      for (const capability of granted) capability.grant(fn);
      functions.set(domain, fn);
    }
    this.functions = functions;

    this.api = new ServiceApi(this, 'Api', {
      // Behind an edge the custom domain is CloudFront's, not API Gateway's.
      stage: stage.edge ? withoutDomain(stage) : stage,
      routes: ROUTE_TABLE,
      functionFor: (domain) => {
        const fn = functions.get(domain);
        if (!fn) throw new Error(`Route table names domain ${domain}, which DOMAINS does not list`);
        return fn.invoked;
      },
    });

    this.edge = this.edgeInFront(props, functions);
    this.publicUrl = this.edge?.publicUrl ?? this.api.publicUrl;
    const connectUrl = `${this.publicUrl}connect`;

    // The billing schedule, queue and worker; its alarms follow the stage config like the ones below.
    this.billing = new Billing(this, 'Billing', { stage, table: this.table.table, stripeSecret: this.stripeSecret });
    // Payments whose provider did not answer, asked about again on a schedule.
    this.paymentResolver = new PaymentResolver(this, 'Payments', {
      stage,
      table: this.table.table,
      stripeSecret: this.stripeSecret,
    });
    // The billing worker and the resolver write payments too: their rows follow at once.
    for (const writer of [this.billing.worker, this.paymentResolver.resolver]) {
      for (const [name, value] of Object.entries(this.search.environment()))
        writer.function.addEnvironment(name, value);
      this.search.grantQuery(writer.role);
      writer.function.node.addDependency(this.search.schema);
    }
    // Every function that takes provider calls limits them to the stage's provider rate limits
    // (issue 46): set by each deploy, so the `live` alias's version has them too. The run-time
    // override is in the StripeKeys secret these three read already (provider-rate-limits.ts).
    const providerRateLimits = JSON.stringify(stage.providerRateLimits);
    for (const fn of [
      functions.get('payments'),
      functions.get('portal'),
      this.billing.worker,
      this.paymentResolver.resolver,
    ]) {
      fn?.function.addEnvironment('SVC_PROVIDER_RATE_LIMITS', providerRateLimits);
    }

    // The hosted onboarding page's address: onboarding builds processes' onboarding_url from it,
    // and so does the stream publisher for their events.
    const onboarding = functions.get('onboarding');
    if (!onboarding) throw new Error('DOMAINS lists no onboarding domain, which serves the hosted page');
    onboarding.function.addEnvironment('SVC_CONNECT_URL', connectUrl);

    // Stream → bus → fan-out queue → fan-out → delivery queue → worker; it also wires the webhooks
    // domain function (queue URL, secrets key). Its alarms follow the stage config too.
    const webhooksApi = functions.get('webhooks');
    if (!webhooksApi) throw new Error('DOMAINS lists no webhooks domain, which the event pipeline serves');
    this.events = new Events(this, 'Events', {
      stage,
      table: this.table.table,
      webhooksApi,
      connectUrl,
    });
    // Onboarding seals the webhook passwords and HMAC keys given with a process, and opens them
    // again to seal them to the endpoints it creates: the same key and context as webhooks.
    this.events.allowSealing(onboarding);

    // The files bucket, its notification queue and the file processor; it also wires the
    // reconciliation domain function (bucket name, uploads/ and reports/ grants).
    const reconciliationApi = functions.get('reconciliation');
    if (!reconciliationApi) throw new Error('DOMAINS lists no reconciliation domain, which signs the uploads');
    this.reconciliation = new Reconciliation(this, 'Reconciliation', {
      stage,
      table: this.table.table,
      api: reconciliationApi,
    });

    // Mail through SES: the queue, its worker (sending from the stage's identity only) and the
    // sweeper; functions that queue mail are granted it with mail.grantQueueing.
    this.mail = new Mail(this, 'Mail', { stage, table: this.table.table });
    // The portal mails links: each link and its mail in one transaction (mailOutboxWrite).
    const portal = functions.get('portal');
    if (!portal) throw new Error('DOMAINS lists no portal domain, which mails portal links');
    this.mail.grantQueueing(portal, portal.role, 'outbox');
    // The billing worker's charge reminders (issue 47 point 5): each mail written with the
    // subscription in one transaction, its portal link's token hashed with the stage's key, and
    // the link on the public address (no request to take it from).
    const billingWorker = this.billing.worker;
    this.mail.grantQueueing(billingWorker, billingWorker.role, 'outbox');
    billingWorker.function.addEnvironment('SVC_HASH_KEY_SECRET_ARN', this.hashKey.secretArn);
    this.hashKey.grantRead(billingWorker.role);
    billingWorker.function.addEnvironment('SVC_PUBLIC_URL', this.publicUrl);

    // Receipts (issue 48): the receipts queue fed by batches and by the bus's refund and dispute
    // events, the worker that issues and replaces receipts (it reads gifts from the search engine
    // and mails receipts), and the bucket of their PDFs.
    const receiptsApi = functions.get('receipts');
    if (!receiptsApi) throw new Error('DOMAINS lists no receipts domain, which queues receipt batches');
    this.receipts = new Receipts(this, 'Receipts', {
      stage,
      table: this.table.table,
      api: receiptsApi,
      bus: this.events.bus,
      accessLogsBucket: this.reconciliation.accessLogsBucket,
    });
    // The portal lists a donor's receipts and serves their PDFs.
    this.receipts.serveDocumentsFrom(portal);
    const receiptsWorker = this.receipts.worker;
    for (const [name, value] of Object.entries(this.search.environment()))
      receiptsWorker.function.addEnvironment(name, value);
    this.search.grantQuery(receiptsWorker.role);
    receiptsWorker.function.node.addDependency(this.search.schema);
    this.mail.grantQueueing(receiptsWorker);

    const watched: Record<string, IFunction> = {};
    for (const [domain, fn] of functions) watched[domain] = fn.function;
    watched['payment-resolver'] = this.paymentResolver.resolver.function;
    watched['search-projector'] = this.search.projector.function;
    const everyFunction: Record<string, IFunction> = {
      ...watched,
      'billing-run': this.billing.run.function,
      'billing-worker': this.billing.worker.function,
      'stream-publisher': this.events.streamPublisher.function,
      'fan-out': this.events.fanOut.function,
      'delivery-worker': this.events.deliveryWorker.function,
      'delivery-sweeper': this.events.sweeper.function,
      'file-processor': this.reconciliation.processor.function,
      'mail-worker': this.mail.worker.function,
      'mail-sweeper': this.mail.sweeper.function,
      'receipts-worker': this.receipts.worker.function,
    };
    let alarms: Alarm[] = [];
    // The reset pnpm ops prewarm schedules at --until, and its alarms (issue 46): before the alarm
    // topic, which finds every alarm of the stack.
    const payments = functions.get('payments');
    if (!payments?.alias) throw new Error('The payments function has no alias for provisioned concurrency');
    new PrewarmAlarms(this, 'Prewarm', {
      alias: payments.alias,
      api: this.api.api,
      apiStage: this.api.stage,
      alarms: stage.alarms.enabled,
    });
    if (stage.alarms.enabled) {
      new ServiceAlarms(this, 'Alarms', {
        stage: stage.name,
        alarms: stage.alarms,
        api: this.api.api,
        functions: watched,
        routeGroups: Object.fromEntries(
          [...functions].map(([domain, fn]) => [domain, { fn: fn.function, logs: fn.logGroup }]),
        ),
      });
      new OperationsAlarms(this, 'OperationsAlarms', {
        stage: stage.name,
        alarms: stage.alarms,
        api: this.api.api,
        table: this.table.table,
        queues: {
          billing: this.billing.queue,
          'reconciliation-files': this.reconciliation.queue,
          receipts: this.receipts.queue,
          // The delivery and fan-out queues' ages are alarmed in Events, with their own thresholds.
        },
        functions: everyFunction,
        billingRun: this.billing.run.function,
        streamPublisher: this.events.streamPublisher.function,
      });
      // Last, so it finds every alarm of the stack.
      this.alarmTopic = new AlarmTopic(this, 'AlarmTopic', { stage: withAlarmRecipients(this, stage) });
      alarms = this.alarmTopic.notifyFrom(this);
    }
    // Every stage, alarms or not: the alarms' states (where there are any), the API, the
    // functions, the queues and the table on one page.
    this.dashboard = new OperationsDashboard(this, 'Dashboard', {
      stage: stage.name,
      api: this.api.api,
      table: this.table.table,
      functions: {
        ...everyFunction,
        // Deploy-time functions (custom resources): errors here fail a deploy.
        'signing-key-bootstrap': this.signingKeys.bootstrap.function,
        'search-migrator': this.search.migrator.function,
      },
      queues: {
        billing: this.billing.queue,
        'reconciliation-files': this.reconciliation.queue,
        'webhook-fan-out': this.events.fanOutQueue,
        'webhook-deliveries': this.events.deliveryQueue,
        'billing-dead-letters': this.billing.deadLetterQueue,
        'billing-run-failures': this.billing.runFailureQueue,
        'delivery-dead-letters': this.events.deliveryDeadLetterQueue,
      },
      alarms,
    });

    new CfnOutput(this, API_URL_OUTPUT, {
      // Behind an edge the execute-api endpoint refuses requests that did not come through CloudFront.
      value: this.edge ? this.publicUrl : this.api.url,
      description: 'Base URL of the HTTP API',
    });
    if (this.edge) {
      new CfnOutput(this, 'EdgeDomainName', {
        value: this.edge.distribution.distributionDomainName,
        description: "The distribution's own domain: the target of the stage domain's CNAME or alias record",
      });
    }
    new CfnOutput(this, STRIPE_SECRET_OUTPUT, {
      value: this.stripeSecret.secretArn,
      description: 'Stripe keys secret (pnpm ops stripe configure)',
    });
    if (this.captchaSecret) {
      new CfnOutput(this, CAPTCHA_SECRET_OUTPUT, {
        value: this.captchaSecret.secretArn,
        description: 'reCAPTCHA secret key of the hosted onboarding page (pnpm ops captcha configure)',
      });
    }
    new CfnOutput(this, SEARCH_CLUSTER_OUTPUT, {
      value: this.search.cluster.clusterArn,
      description: 'Search engine cluster (Aurora PostgreSQL, Data API): pnpm ops search:rebuild',
    });
    new CfnOutput(this, SEARCH_SECRET_OUTPUT, {
      value: this.search.cluster.secret?.secretArn ?? '',
      description: 'Search engine credentials the Data API uses',
    });
    new CfnOutput(this, TABLE_NAME_OUTPUT, {
      value: this.table.table.tableName,
      description: 'The single DynamoDB table',
    });
    this.prewarmOutputs();
    // The SQS-fed workers' dead-letter queues, for `pnpm ops dlq:pull`. A name added to
    // DEAD_LETTER_QUEUE_OUTPUTS does not compile until its queue is named here.
    const deadLetterQueues: Record<DeadLetterQueueName, Queue> = {
      billing: this.billing.deadLetterQueue,
      delivery: this.events.deliveryDeadLetterQueue,
      'fan-out': this.events.fanOutDeadLetterQueue,
      files: this.reconciliation.deadLetterQueue,
      mail: this.mail.deadLetterQueue,
      receipts: this.receipts.deadLetterQueue,
    };
    for (const [name, queue] of Object.entries(deadLetterQueues) as Array<[DeadLetterQueueName, Queue]>) {
      new CfnOutput(this, DEAD_LETTER_QUEUE_OUTPUTS[name], {
        value: queue.queueUrl,
        description: `Dead letters of the ${name} queue's worker (pnpm ops dlq:pull --queue ${name})`,
      });
    }
  }

  /**
   * The stage's edge, if it has one: CloudFront with the us-east-1 web ACL in front of the API,
   * and on every function that serves a route the origin secret it must see
   * (SVC_EDGE_ORIGIN_SECRET) and the public address to build links with (SVC_PUBLIC_URL: the
   * request's own host is the execute-api one CloudFront calls).
   */
  private edgeInFront(props: ServiceStackProps, functions: ReadonlyMap<DomainName, DomainFunction>): Edge | undefined {
    const { stage } = props;
    if (!stage.edge) return undefined;
    const edgeFirewall = props.edgeFirewall ?? {
      stackName: edgeFirewallStackName(this.stackName),
      outputName: WEB_ACL_ARN_OUTPUT,
    };
    const edge = new Edge(this, 'Edge', {
      stage,
      edge: stage.edge,
      api: this.api.api,
      // A weak cross-region reference, resolved by CloudFormation at deploy (edge-firewall-stack.ts).
      webAclArn: Fn.getStackOutput(edgeFirewall.stackName, edgeFirewall.outputName, EDGE_FIREWALL_REGION),
    });
    const secret = edge.originSecret.secretValue.unsafeUnwrap();
    const publicUrl = edge.publicUrl.replace(/\/$/, '');
    for (const fn of functions.values()) {
      fn.function.addEnvironment(ORIGIN_SECRET_ENV, secret);
      fn.function.addEnvironment('SVC_PUBLIC_URL', publicUrl);
    }
    return edge;
  }

  /** What `pnpm ops prewarm` addresses: the payments alias, the API's stage and its configured throttle. */
  private prewarmOutputs(): void {
    const payments = this.functions.get('payments');
    if (!payments?.alias) throw new Error('The payments function has no alias for provisioned concurrency');
    const { throttle } = this.config;
    type Output = { value: string; description: string };
    const outputs: Record<keyof typeof PREWARM_OUTPUTS, Output> = {
      paymentsFunction: { value: payments.function.functionArn, description: 'The payments function' },
      paymentsAlias: {
        value: payments.alias.aliasName,
        description: 'The alias its routes invoke (pnpm ops prewarm: provisioned concurrency)',
      },
      apiId: { value: this.api.api.apiId, description: 'The HTTP API (pnpm ops prewarm: throttling)' },
      apiStage: { value: this.api.stage.stageName, description: 'The HTTP API stage' },
      apiThrottle: {
        value: `${throttle.rateLimit}/${throttle.burstLimit}`,
        description: "The stage's configured throttle, rate/burst (pnpm ops prewarm --reset returns to it)",
      },
    };
    for (const [key, output] of Object.entries(outputs) as Array<[keyof typeof PREWARM_OUTPUTS, Output]>) {
      new CfnOutput(this, PREWARM_OUTPUTS[key], output);
    }
  }

  /**
   * What a domain function may use beyond the table, each with the domains that use it: the
   * variables that name it and the grants it takes. One loop gives each domain its own.
   */
  private capabilities(captcha: ResolvedCaptcha): DomainCapability[] {
    const only = (...domains: DomainName[]) => new Set<DomainName>(domains);
    return [
      {
        // Every domain hashes what it recognises without keeping (request fingerprints, tokens).
        domains: new Set(domainNames()),
        environment: { SVC_HASH_KEY_SECRET_ARN: this.hashKey.secretArn },
        grant: (fn) => this.hashKey.grantRead(fn.role),
      },
      {
        // Identity alone signs tokens; every other domain verifies them from the public keys in the table.
        domains: only('identity'),
        environment: { SVC_SIGNING_KEY_SECRET_ARN: this.signingKeys.secret.secretArn },
        grant: (fn) => {
          this.signingKeys.grantRead(fn.role);
          // Serve tokens only once the secret holds a key set.
          fn.function.node.addDependency(this.signingKeys.ready);
        },
      },
      {
        // Payments fingerprints cards and talks to the providers; so does the donor portal, which
        // sets up a donor's new payment method exactly as POST /payment-sources does.
        domains: only('payments', 'portal'),
        environment: {
          SVC_CARD_FINGERPRINT_SECRET_ARN: this.cardFingerprintKey.secretArn,
          SVC_STRIPE_SECRET_ARN: this.stripeSecret.secretArn,
        },
        grant: (fn) => {
          this.cardFingerprintKey.grantRead(fn.role);
          this.stripeSecret.grantRead(fn.role);
        },
      },
      {
        // Payments, subscriptions and organisations search; they and onboarding write what the
        // engine holds (payments, subscriptions, plans, organisations), whose rows follow at once.
        domains: SEARCH_DOMAINS,
        environment: this.search.environment(),
        grant: (fn) => {
          this.search.grantQuery(fn.role);
          fn.function.node.addDependency(this.search.schema);
        },
      },
      {
        // Onboarding alone verifies captchas (the hosted page's e-mail step, the existence check).
        domains: only('onboarding'),
        environment: captchaEnvironment(captcha, this.captchaSecret),
        grant: (fn) => this.captchaSecret?.grantRead(fn.role),
      },
    ];
  }

  private captchaSecretResource(): Secret {
    const secret = new Secret(this, 'CaptchaSecret', {
      description:
        'reCAPTCHA secret key of the hosted onboarding page (/connect): the operator replaces the generated placeholder with the secret key from Google reCAPTCHA admin console (pnpm ops captcha configure); onboarding reads it',
      removalPolicy: this.config.removalPolicy,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A third-party API key: Google issues the reCAPTCHA secret key, and the operator rotates it in the reCAPTCHA admin console and puts the new one here; a rotation Lambda cannot obtain a new key.',
    });
    return secret;
  }
}

/** The stage without its custom domain (which its edge serves instead of API Gateway). */
function withoutDomain(stage: StageConfig): StageConfig {
  const { domain: _served, ...rest } = stage;
  return rest;
}

/**
 * The stage with whom its alarms notify: the config's `alarms.notify` and the synth context's
 * (`-c alarmsNotify.<stage>=…`). A stage with alarms that would reach nobody fails synth, as a
 * reCAPTCHA stage without a site key does: alarms nobody reads are no alarms.
 */
function withAlarmRecipients(scope: Construct, stage: StageConfig): StageConfig {
  const contextKey = alarmsNotifyContext(stage.name);
  const given: unknown = scope.node.tryGetContext(contextKey);
  const entries = (typeof given === 'string' ? given.split(',') : []).map((e) => e.trim()).filter(Boolean);
  const bad = entries.filter((e) => !/^arn:aws[\w-]*:sns:/.test(e) && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(e));
  if (bad.length > 0) {
    throw new StageConfigurationError(
      `-c ${contextKey}: neither an e-mail address nor an SNS topic ARN: ${bad.join(', ')}`,
    );
  }
  const emails = [...(stage.alarms.notify?.emails ?? []), ...entries.filter((e) => !e.startsWith('arn:'))];
  const topicArns = [...(stage.alarms.notify?.topicArns ?? []), ...entries.filter((e) => e.startsWith('arn:'))];
  if (emails.length + topicArns.length === 0) {
    throw new StageConfigurationError(
      `Stage ${stage.name} has alarms that would notify nobody: give -c ${contextKey}=<e-mail or SNS topic ARN>[,…] or set alarms.notify in infra/config/stages.ts`,
    );
  }
  return { ...stage, alarms: { ...stage.alarms, notify: { emails, topicArns } } };
}

/**
 * The existing table a stage runs on, or none: the one `pnpm ops table:adopt` recorded in
 * infra/config/adopted-tables.json (`adopted`), unless this synth is given another with
 * `-c table.<stage>=<name> -c tableStream.<stage>=<stream ARN>` (a one-off: the next deploy
 * without them goes back to the file's). A name without its stream is refused: the event
 * pipeline and the search projector read the table's stream.
 */
function existingTableOf(
  scope: Construct,
  stage: StageConfig,
  adopted: AdoptedTable | undefined,
): { tableName: string; streamArn: string } | undefined {
  const nameKey = existingTableContext(stage.name);
  const streamKey = existingTableStreamContext(stage.name);
  const given: unknown = scope.node.tryGetContext(nameKey);
  const givenStream: unknown = scope.node.tryGetContext(streamKey);
  const fromFile = given === undefined && givenStream === undefined;
  const name: unknown = fromFile ? adopted?.tableName : given;
  const stream: unknown = fromFile ? adopted?.streamArn : givenStream;
  if (name === undefined && stream === undefined) return undefined;
  const where = fromFile ? `infra/config/adopted-tables.json (${stage.name})` : `-c ${nameKey}`;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(name)) {
    throw new StageConfigurationError(`${where} must name a DynamoDB table (got ${JSON.stringify(name)})`);
  }
  if (typeof stream !== 'string' || !stream.startsWith(`arn:aws`) || !stream.includes(`:table/${name}/stream/`)) {
    throw new StageConfigurationError(
      `${fromFile ? `${where}: ${name}` : `-c ${nameKey}=${name}`} needs ${fromFile ? 'streamArn' : `-c ${streamKey}`}=<the ARN of its stream>: \`pnpm ops table:adopt --stage ${stage.name} --table ${name}\` enables the stream and records both`,
    );
  }
  return { tableName: name, streamArn: stream };
}

/** A resource domain functions may use beyond the table (ServiceStack.capabilities). */
interface DomainCapability {
  domains: ReadonlySet<DomainName>;
  environment: Record<string, string>;
  grant: (fn: DomainFunction) => void;
}

type ResolvedCaptcha = { verifier: 'recaptcha'; siteKey: string } | { verifier: 'off' };

/**
 * The stage's captcha, its reCAPTCHA site key from the stage config or the synth context. A
 * reCAPTCHA stage without one fails synth: deployed, its hosted page could pass no e-mail step.
 */
function resolveCaptcha(scope: Construct, stage: StageConfig): ResolvedCaptcha {
  if (stage.captcha.verifier === 'off') return { verifier: 'off' };
  const contextKey = captchaSiteKeyContext(stage.name);
  const fromContext: unknown = scope.node.tryGetContext(contextKey);
  const siteKey = stage.captcha.siteKey ?? (typeof fromContext === 'string' ? fromContext.trim() : '');
  if (!siteKey || /\s/.test(siteKey)) {
    throw new StageConfigurationError(
      `Stage ${stage.name} verifies captchas with reCAPTCHA but has no site key: give it with -c ${contextKey}=<site key> or set captcha.siteKey in infra/config/stages.ts (or captcha: { verifier: 'off' } for a stage with made-up data only)`,
    );
  }
  return { verifier: 'recaptcha', siteKey };
}

function captchaEnvironment(captcha: ResolvedCaptcha, secret: Secret | undefined): Record<string, string> {
  if (captcha.verifier === 'off') return { SVC_CAPTCHA_VERIFIER: 'off' };
  if (!secret) throw new Error('A reCAPTCHA stage has a captcha secret');
  return {
    SVC_CAPTCHA_VERIFIER: 'recaptcha',
    SVC_CAPTCHA_SECRET_ARN: secret.secretArn,
    SVC_CAPTCHA_SITE_KEY: captcha.siteKey,
  };
}
