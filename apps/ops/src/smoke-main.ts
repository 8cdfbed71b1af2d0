import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { receiverCertificate, runSmoke } from './smoke';

const USAGE = `Usage: pnpm smoke -- [--base-url URL] [--account UUID] [--profile card] [--currency CHF]
                     [--receiver-url https://…] [--receiver-tls DIR] [--delivery-seconds 60]
       pnpm smoke -- --make-receiver-cert [--receiver-tls DIR]   (makes DIR/cert.pem, prints its path)

Runs a short end-to-end check against a running stage: a token, a test-mode card payment, a refund,
and both events delivered to a webhook receiver. The client comes from SVC_SMOKE_CLIENT_ID and
SVC_SMOKE_CLIENT_SECRET (default: the local demo client). Without --receiver-url the check starts a
receiver on 127.0.0.1 whose certificate (DIR/cert.pem, default .data/smoke-receiver) the service
must trust: NODE_EXTRA_CA_CERTS=.data/smoke-receiver/cert.pem pnpm start.
Exit code 0 when every step passed, 1 otherwise.`;

// pnpm passes the `--` separator through to the script on some versions.
const args = process.argv.slice(2).filter((arg, index) => !(index === 0 && arg === '--'));
const { values } = parseArgs({
  args,
  options: {
    'base-url': { type: 'string' },
    account: { type: 'string' },
    profile: { type: 'string', default: 'card' },
    currency: { type: 'string', default: 'CHF' },
    'receiver-url': { type: 'string' },
    'receiver-tls': { type: 'string', default: '.data/smoke-receiver' },
    'delivery-seconds': { type: 'string', default: '60' },
    'make-receiver-cert': { type: 'boolean' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values['make-receiver-cert']) {
  receiverCertificate(values['receiver-tls']);
  console.log(join(values['receiver-tls'], 'cert.pem'));
  process.exit(0);
}
const deliverySeconds = Number(values['delivery-seconds']);
if (!Number.isFinite(deliverySeconds) || deliverySeconds <= 0) {
  console.error(`--delivery-seconds must be a positive number\n\n${USAGE}`);
  process.exit(2);
}
const result = await runSmoke({
  baseUrl: values['base-url'] ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`,
  clientId: process.env.SVC_SMOKE_CLIENT_ID ?? 'demo-client',
  clientSecret: process.env.SVC_SMOKE_CLIENT_SECRET ?? 'demo-secret-change-me',
  ...(values.account ? { account: values.account } : {}),
  profile: values.profile,
  currency: values.currency,
  ...(values['receiver-url'] ? { receiverUrl: values['receiver-url'] } : {}),
  receiverTlsDir: values['receiver-tls'],
  deliverySeconds,
  out: (line) => console.log(line),
});
console.log(result.ok ? 'smoke check passed' : 'smoke check FAILED');
process.exit(result.ok ? 0 : 1);
