/**
 * The domain functions: one Lambda each. The CDK bundles `entry`; the local gateway imports the
 * same file and calls its `handler`, so both run the very same code.
 */
export const DOMAINS = {
  platform: { entry: 'apps/api/src/platform-lambda.ts', memoryMb: 256 },
  identity: { entry: 'services/identity/src/handlers/lambda.ts', memoryMb: 512 },
  organisations: { entry: 'apps/api/src/organisations-lambda.ts', memoryMb: 256 },
  payments: { entry: 'apps/api/src/payments-lambda.ts', memoryMb: 1024 },
  supporters: { entry: 'services/supporters/src/handlers/lambda.ts', memoryMb: 256 },
  subscriptions: { entry: 'apps/api/src/subscriptions-lambda.ts', memoryMb: 512 },
  webhooks: { entry: 'apps/api/src/webhooks-lambda.ts', memoryMb: 512 },
  // scrypt for user passwords wants the CPU that comes with memory.
  onboarding: { entry: 'apps/api/src/onboarding-lambda.ts', memoryMb: 1024 },
  reconciliation: { entry: 'services/reconciliation/src/handlers/lambda.ts', memoryMb: 512 },
  // The donor portal: its settings, links, pages and the API they use; it sets up a donor's new
  // payment method as payments does (card rules, provider SDKs), so it gets payments' memory.
  portal: { entry: 'apps/api/src/portal-lambda.ts', memoryMb: 1024 },
  // Receipts and Gift Aid: settings, batches, the receipts and their PDFs (pdfkit wants memory).
  receipts: { entry: 'services/receipts/src/handlers/lambda.ts', memoryMb: 1024 },
} as const;

export type DomainName = keyof typeof DOMAINS;

/**
 * Functions that no route calls: the billing schedule's run and the billing queue's worker; the
 * event pipeline's stream publisher, fan-out, delivery worker and retry sweeper; the reconciliation file processor;
 * the payment resolver; the search projector; the mail worker and sweeper; the receipts worker.
 * The local runtime imports the same entries and calls the same `handler`s.
 */
export const WORKERS = {
  billingRun: { entry: 'services/subscriptions/src/handlers/billing-run.ts', memoryMb: 512 },
  billingWorker: { entry: 'apps/api/src/billing-worker-lambda.ts', memoryMb: 512 },
  streamPublisher: { entry: 'apps/api/src/stream-publisher-lambda.ts', memoryMb: 512 },
  fanOut: { entry: 'services/webhooks/src/handlers/fan-out.ts', memoryMb: 512 },
  deliveryWorker: { entry: 'services/webhooks/src/handlers/delivery-worker.ts', memoryMb: 512 },
  deliverySweeper: { entry: 'services/webhooks/src/handlers/delivery-sweeper.ts', memoryMb: 256 },
  // Asks providers again about payments whose answer never came.
  paymentResolver: { entry: 'apps/api/src/payment-resolver-lambda.ts', memoryMb: 256 },
  // The table's stream → payment, subscription and organisation rows in the search engine
  // (Aurora through the Data API).
  searchProjector: { entry: 'apps/api/src/search-projector-lambda.ts', memoryMb: 512 },
  // Parses files of up to 100 MiB as streams; the results of 100k rows are held until written.
  fileProcessor: { entry: 'services/reconciliation/src/handlers/file-processor.ts', memoryMb: 1024 },
  // The mail queue → SES (API v2), and the schedule that queues unsent mails again (@svc/mail).
  mailWorker: { entry: 'packages/mail/src/handlers/worker.ts', memoryMb: 256 },
  mailSweeper: { entry: 'packages/mail/src/handlers/sweeper.ts', memoryMb: 256 },
  // Receipt batches page by page, and receipts replaced after a refund (renders PDFs to mail them).
  receiptsWorker: { entry: 'services/receipts/src/handlers/worker.ts', memoryMb: 1024 },
} as const;

export type WorkerName = keyof typeof WORKERS;
