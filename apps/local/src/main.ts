// The SDK warns that Node 20 support ends in 2027; the Lambda runtime is Node 22 already.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { readSettings } from './environment';
import { startService } from './runtime';

/** `pnpm start`: the whole service on this machine. Ctrl-C stops everything it started. */
const settings = readSettings();
// A signal during start-up exits at once; the exit hook of DynamoDB Local stops Java too.
const exitDuringStartup = () => process.exit(130);
process.once('SIGINT', exitDuringStartup);
process.once('SIGTERM', exitDuringStartup);
const service = await startService(settings).catch((error: unknown) => {
  console.error(`Could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

const { url, seed, summary } = service;
const lines = [
  '',
  `svc is running at ${url}  (data: ${settings.inMemory ? 'in memory' : settings.dataDir})`,
  `  health   ${url}/health`,
  `  API docs ${url}/docs  (${url}/openapi.json)`,
  `  store    DynamoDB Local at ${service.dynamoEndpoint}, table ${settings.tableName}`,
  `  files    S3 stand-in at ${process.env.AWS_ENDPOINT_URL_S3}, bucket ${process.env.SVC_RECONCILIATION_BUCKET}`,
  ...(settings.background === 'settle'
    ? ['  background work runs only on POST /_local/settle (SVC_BACKGROUND=settle)']
    : []),
  `  seed     ${summary.organisations} organisations, ${summary.accounts} accounts, ${summary.clients} clients, ${summary.partners} partners${settings.seedFile ? ` from ${settings.seedFile}` : ' (built-in demo seed)'}`,
  '',
  settings.seedFile ? 'Clients (secrets as in your seed file):' : 'Demo credentials:',
  ...seed.clients.map(
    (c) =>
      `  ${c.role.padEnd(8)} client_id=${c.client_id}${settings.seedFile ? '' : `  client_secret=${c.client_secret}`}`,
  ),
  ...seed.partners.map(
    (p) => `  partner  client_id=${p.client_id}${settings.seedFile ? '' : `  client_secret=${p.client_secret}`}`,
  ),
  '',
  'Try:',
  `  curl -s ${url}/oauth2/token -H 'content-type: application/json' \\`,
  `    -d '{"grant_type":"client_credentials","client_id":"${seed.clients[0]?.client_id ?? 'CLIENT_ID'}","client_secret":"…"}'`,
  '',
  'Ctrl-C stops the service and DynamoDB Local.',
];
let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping…`);
  await service.stop();
  process.exit(0);
};
// The stopping handlers first, then the start-up ones removed, then the banner: removing a
// signal's last listener drops a signal already received and not yet handled, and a Ctrl-C (or a
// script's SIGINT) right as the banner appeared was lost, leaving the service running without Java.
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
process.removeListener('SIGINT', exitDuringStartup);
process.removeListener('SIGTERM', exitDuringStartup);
console.log(lines.join('\n'));
