import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SEARCH_PROJECTIONS, wireDomains } from '@svc/api';
import { type Grant, newUuid, type Role } from '@svc/core';
import { createClient } from '@svc/identity';
import { findOrganisation } from '@svc/organisations';
import { allProviderHealth, PROVIDER_NAMES } from '@svc/payments';
import { saveSourceConfiguration, sourceConfigurationSchema } from '@svc/reconciliation';
import { applySeed, parseSeed } from '@svc/seed';
import { progressBar, rebuildSearch } from '@svc/sql';
import { SUBSCRIPTION } from '@svc/subscriptions';
import { SUPPORTER, withEmailHash } from '@svc/supporters';
import { configureCaptcha } from './captcha';
import {
  DEAD_LETTER_QUEUE_NAMES,
  DLQ_PULL_DEFAULT,
  DLQ_PULL_MAX,
  DLQ_PULL_VISIBILITY_SECONDS,
  runDlqPull,
} from './dlq-pull';
import { runPrewarm } from './prewarm';
import { configureProviderLimits, providerStatusLines } from './providers';
import { reindexEntities } from './reindex';
import { configureStripe, configureWebhookEndpoint, replayEvents } from './stripe';
import { adoptTable, restoreTable } from './table-recovery';
import { openTarget } from './target';

const USAGE = `Usage:
  pnpm ops seed --file <seed.json> [--stage <stage>] [--table <name>]
  pnpm ops clients create [--role customer|operator] [--grant <org uuid>[:<account uuid>]]... [--id <client id>] [--stage <stage>] [--table <name>]
  pnpm ops source-configurations create --organisation <org uuid> --name <name> --file-type camt054|csv [--uuid <uuid>] [--stage <stage>] [--table <name>]
  pnpm ops stripe configure --stage <stage>
      puts SVC_STRIPE_TEST_SECRET_KEY, SVC_STRIPE_LIVE_SECRET_KEY and SVC_STRIPE_WEBHOOK_SECRET, and
      Adyen's SVC_ADYEN_API_KEY, SVC_ADYEN_HMAC_KEY, SVC_ADYEN_LIVE_URL_PREFIX,
      SVC_ADYEN_NOTIFICATION_USERNAME and SVC_ADYEN_NOTIFICATION_PASSWORD, from the environment (keys
      never on the command line) into the stage's providers secret; unset ones are kept
  pnpm ops stripe:webhook-endpoint --url https://<api host>/providers/stripe/events [--stage <stage>] [--mode test|live] [--connect]
      creates (or updates) Stripe's webhook endpoint at the pinned API version with the handled event
      list; a new endpoint's signing secret is added to the stage's Stripe secret (printed once locally)
  pnpm ops stripe:events --since <unix seconds|ISO time> [--stage <stage>] [--mode test|live] [--account acct_…]
      replays Stripe's events since then (Stripe keeps 30 days) through the same handler as
      deliveries; ones applied before are skipped. --account reads a connected account's events
  pnpm ops providers:status [--stage <stage>] [--table <name>]
      prints each payment provider's circuit (closed, open, half_open) per mode, shared by every
      function: its failures in the current window, when it opened and the last failure
  pnpm ops providers:limits --stage <stage> [--set '{"stripe": {"live": 90}}' | --clear]
      prints, sets or clears the run-time provider rate limits (the providers secret's
      provider_rate_limits, laid over the stage config's providerRateLimits per provider, mode and
      account); every function applies a change within a minute, no deploy
  pnpm ops captcha configure --stage <stage>
      puts SVC_CAPTCHA_SECRET from the environment (the reCAPTCHA secret key) into the stage's CaptchaSecret

  pnpm ops search:rebuild [--stage <stage>] [--segments 8] [--restart]
      fills the search engine from the table (parallel scan segments, resumable: an interrupted run
      goes on where it stopped unless --restart); locally, stop \`pnpm start\` first

  pnpm ops table:reindex [--stage <stage>]
      writes the index keys of stored subscriptions and supporters that predate their indexes (a
      supporter's subscriptions for the donor portal, supporters by e-mail); safe to repeat

  pnpm ops table:restore [--stage <stage>] [--to <ISO time>] [--table <new name>]
      restores the stage's table as of --to (default: the latest restorable time) into a new table;
      locally, where DynamoDB Local keeps no backups, copies it into one made as a restore makes it
  pnpm ops table:adopt [--stage <stage>] --table <restored table>
      waits for it, enables its stream and TTL (deployed: point-in-time recovery, the stack's tags;
      prod: deletion protection), records it as the stage's table in infra/config/adopted-tables.json
      (commit it: every deploy keeps the stage on it) (docs/operations.md, "Restoring the table")

  pnpm ops dlq:pull --stage <stage> --queue ${DEAD_LETTER_QUEUE_NAMES.join('|')} [--out <file>] [--max ${DLQ_PULL_DEFAULT}]
  pnpm ops dlq:pull --queue-url <url> [--out <file>] [--max ${DLQ_PULL_DEFAULT}]
      receives up to --max (at most ${DLQ_PULL_MAX}) messages of a worker's dead-letter queue and writes
      them as the Lambda SQS event ({"Records": [...]}) that worker's handler takes as it is, for a
      local replay: to stdout, or to --out (created 0600). Nothing is deleted: each message is hidden
      for ${DLQ_PULL_VISIBILITY_SECONDS} s, then waits in the queue for a redrive as before (its receive count one higher).
      The messages are production data (donor details included): never commit the file, delete it
      when done. --queue-url names the queue itself (the local SQS stand-in) instead of --stage.
      The stream publisher's dead-letter queue cannot be pulled: it holds the positions of table
      stream records given up on, not SQS messages of a function.

  pnpm ops prewarm --stage <stage> --donations-per-second <N> --until <ISO time with zone> [--dry-run]
  pnpm ops prewarm --stage <stage> --reset [--dry-run]
  pnpm ops prewarm --stage <stage> --status
      capacity for a known date (a telethon): raises the table's and indexes' warm throughput, puts
      provisioned concurrency on the payments function's live alias and raises the API's throttle
      for N donations a second (apps/ops/src/load-model.ts), with each one's cost; --reset takes the
      last two back (warm throughput cannot be lowered; it costs nothing after the raise); --status
      shows all three and warns once --until has passed (docs/operations.md, "Prewarming")

Without --stage the local data directory (SVC_DATA_DIR, default .data) is used.`;

export async function runOps(argv: string[], out: (line: string) => void = console.log): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      file: { type: 'string' },
      stage: { type: 'string' },
      table: { type: 'string' },
      role: { type: 'string' },
      grant: { type: 'string', multiple: true },
      id: { type: 'string' },
      organisation: { type: 'string' },
      name: { type: 'string' },
      'file-type': { type: 'string' },
      uuid: { type: 'string' },
      segments: { type: 'string' },
      restart: { type: 'boolean' },
      queue: { type: 'string' },
      'queue-url': { type: 'string' },
      out: { type: 'string' },
      max: { type: 'string' },
      since: { type: 'string' },
      mode: { type: 'string' },
      account: { type: 'string' },
      url: { type: 'string' },
      connect: { type: 'boolean' },
      to: { type: 'string' },
      'donations-per-second': { type: 'string' },
      until: { type: 'string' },
      reset: { type: 'boolean' },
      status: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      set: { type: 'string' },
      clear: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || !COMMANDS.includes(command)) {
    out(USAGE);
    if (!values.help) throw new Error(`Unknown command: ${command || '(none)'}`);
    return;
  }
  if (command === 'stripe configure') {
    out(await configureStripe(values.stage));
    return;
  }
  if (command === 'stripe:events') {
    out(await replayEvents(values));
    return;
  }
  if (command === 'stripe:webhook-endpoint') {
    for (const line of await configureWebhookEndpoint(values)) out(line);
    return;
  }
  if (command === 'providers:status') {
    const target = await openTarget({ stage: values.stage, table: values.table });
    try {
      out(`Provider circuits on ${target.description}:`);
      for (const line of providerStatusLines(await allProviderHealth(PROVIDER_NAMES))) out(line);
    } finally {
      await target.close();
    }
    return;
  }
  if (command === 'providers:limits') {
    out(await configureProviderLimits(values));
    return;
  }
  if (command === 'captcha configure') {
    out(await configureCaptcha(values.stage));
    return;
  }
  if (command === 'table:restore' || command === 'table:adopt') {
    // The stage's table (its stack's output) or the local one; --table names the restored table.
    const target = await openTarget({ stage: values.stage });
    try {
      const options = { stage: values.stage, table: values.table, to: values.to };
      if (command === 'table:restore') await restoreTable(options, out);
      else await adoptTable(options, out);
    } finally {
      await target.close();
    }
    return;
  }
  if (command === 'prewarm') {
    await runPrewarm(values, out);
    return;
  }
  if (command === 'dlq:pull') {
    await runDlqPull(values, out);
    return;
  }
  if (command === 'table:reindex') {
    const target = await openTarget({ stage: values.stage, table: values.table });
    try {
      const summary = await reindexEntities([SUBSCRIPTION, { entity: SUPPORTER, prepare: withEmailHash }], (progress) =>
        process.stderr.write(`\rscanned ${progress.scanned}, updated ${progress.updated}`),
      );
      process.stderr.write('\n');
      out(`Reindexed ${target.description}: ${JSON.stringify(summary)}`);
    } finally {
      await target.close();
    }
    return;
  }
  if (command === 'search:rebuild') {
    const segments = Number(values.segments ?? 8);
    if (!Number.isInteger(segments) || segments < 1 || segments > 64) throw new Error('--segments is 1 to 64');
    const target = await openTarget({ stage: values.stage, table: values.table, search: true });
    try {
      const summary = await rebuildSearch({
        projections: SEARCH_PROJECTIONS,
        segments,
        restart: values.restart ?? false,
        progressFile: `.search-rebuild-${values.stage ?? 'local'}.json`,
        onProgress: (scanned, total) => process.stderr.write(`\r${progressBar(scanned, total)}`),
      });
      process.stderr.write('\n');
      out(`Rebuilt search on ${target.description}: ${JSON.stringify(summary)}`);
    } finally {
      await target.close();
    }
    return;
  }
  const grants = (values.grant ?? []).map(parseGrant);
  const role = values.role ?? 'customer';
  if (role !== 'customer' && role !== 'operator') throw new Error('--role is customer or operator');
  if (command === 'seed' && !values.file) throw new Error('seed needs --file');
  const seed = values.file ? parseSeed(JSON.parse(readFileSync(values.file, 'utf8'))) : undefined;
  // A source configuration is checked like the seed's, before anything is opened.
  const configuration =
    command === 'source-configurations create'
      ? sourceConfigurationSchema.parse({
          uuid: values.uuid ?? newUuid(),
          organisation_uuid: values.organisation,
          name: values.name,
          file_type: values['file-type'],
        })
      : undefined;

  const target = await openTarget({ stage: values.stage, table: values.table });
  try {
    if (configuration) {
      if (!(await findOrganisation(configuration.organisation_uuid))) {
        throw new Error(`No organisation ${configuration.organisation_uuid} on ${target.description}`);
      }
      await saveSourceConfiguration(configuration);
      out(`Saved source configuration on ${target.description}: ${JSON.stringify(configuration)}`);
    } else if (seed) {
      // The seed's organisations are projected into the stage's search engine as they are written.
      wireDomains();
      const summary = await applySeed(seed);
      out(`Applied seed to ${target.description}: ${JSON.stringify(summary)}`);
    } else {
      const created = await createClient({
        role: role as Role,
        grants,
        ...(values.id ? { client_id: values.id } : {}),
      });
      out(`Created client on ${target.description}. The secret is shown only now:`);
      out(`client_id=${created.client_id}`);
      out(`client_secret=${created.client_secret}`);
    }
  } finally {
    await target.close();
  }
}

const COMMANDS = [
  'seed',
  'clients create',
  'source-configurations create',
  'stripe configure',
  'stripe:events',
  'stripe:webhook-endpoint',
  'captcha configure',
  'providers:status',
  'providers:limits',
  'search:rebuild',
  'table:reindex',
  'dlq:pull',
  'table:restore',
  'table:adopt',
  'prewarm',
];

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseGrant(text: string): Grant {
  const [organisation, account, ...rest] = text.split(':');
  if (!organisation || !GUID.test(organisation) || rest.length > 0 || (account !== undefined && !GUID.test(account))) {
    throw new Error(`--grant takes <org uuid>[:<account uuid>], got ${text}`);
  }
  return account ? { organisation_uuid: organisation, account_uuid: account } : { organisation_uuid: organisation };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) {
  runOps(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
