import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { measureInit } from './init-time';
import { httpGet, type LoadResult, runLoad } from './load';

/**
 * Benchmarks of issue 2, each against a baseline measured in the same run:
 *  1. GET /organisations/{uuid} through the local gateway (a separate `pnpm start` process) vs
 *     raw GetItem calls on the same DynamoDB Local;
 *  2. module-init time of each Lambda bundle vs a bundle holding only the DynamoDB client.
 * All traffic goes to 127.0.0.1; every loop is bounded in time and count.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const ROOT = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ORG = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';

async function startService(): Promise<{ child: ChildProcess; url: string; dynamo: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/local/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', SVC_DATA_DIR: ':memory:', POWERTOOLS_LOG_LEVEL: 'ERROR' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let output = '';
  return new Promise((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /svc is running at (\S+)[\s\S]*DynamoDB Local at (\S+),/.exec(output);
      if (match?.[1] && match[2]) done({ child, url: match[1], dynamo: match[2] });
    });
    child.once('exit', (code) => fail(new Error(`service exited ${code}: ${output}`)));
  });
}

function line(label: string, r: LoadResult): string {
  return `${label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(7)} req/s   p50 ${r.p50ms.toFixed(1)} ms   p95 ${r.p95ms.toFixed(1)} ms   errors ${r.errors}`;
}

async function main() {
  if (process.env.BENCH_ONLY === 'init') {
    for (const f of await measureInit())
      console.log(
        `${f.bundle.padEnd(22)} ${(f.bytes / 1024).toFixed(0).padStart(6)} KiB  ${f.initMs.toFixed(1).padStart(7)} ms  ${f.ratio.toFixed(2)}x bare`,
      );
    return;
  }
  const service = await startService();
  try {
    const tokenResponse = await fetch(`${service.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: 'demo-client',
        client_secret: 'demo-secret-change-me',
      }),
    });
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}` };
    const apiUrl = `${service.url}/organisations/${ORG}`;

    const dynamo = new DynamoDBClient({
      endpoint: service.dynamo,
      region: 'eu-central-2',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const rawGet = async () => {
      const out = await dynamo.send(
        new GetItemCommand({
          TableName: 'svc-local',
          Key: { pk: { S: `ORG#${ORG}` }, sk: { S: 'ORG' } },
          ConsistentRead: true,
        }),
      );
      return out.Item !== undefined;
    };
    const apiGet = () => httpGet(apiUrl, headers);

    // Warm both paths (JIT on both sides, connection pools), then measure them alternately.
    await runLoad(rawGet, { seconds: 4, concurrency: CONCURRENCY });
    await runLoad(apiGet, { seconds: 4, concurrency: CONCURRENCY });
    // One loop each: no two requests overlap, so nothing can be coalesced across requests and
    // this is the cost of one request as a Lambda container would serve it.
    const rawSerial = await runLoad(rawGet, { seconds: SECONDS / 2, concurrency: 1 });
    const apiSerial = await runLoad(apiGet, { seconds: SECONDS / 2, concurrency: 1 });
    const raw: LoadResult[] = [];
    const api: LoadResult[] = [];
    for (let round = 0; round < 2; round++) {
      raw.push(await runLoad(rawGet, { seconds: SECONDS / 2, concurrency: CONCURRENCY }));
      api.push(await runLoad(apiGet, { seconds: SECONDS / 2, concurrency: CONCURRENCY }));
    }
    const rate = (rs: LoadResult[]) => rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((s, r) => s + r.seconds, 0);
    const ratio = rate(api) / rate(raw);
    console.log(`\nThroughput, ${CONCURRENCY} concurrent loops, ${SECONDS} s each (2 rounds):`);
    for (const [i, r] of raw.entries()) console.log(line(`raw GetItem (round ${i + 1})`, r));
    for (const [i, r] of api.entries()) console.log(line(`GET /organisations/{uuid} (round ${i + 1})`, r));
    console.log(`gateway / raw = ${(ratio * 100).toFixed(0)}%  (goal >= 70%)`);
    console.log('\nOne request at a time:');
    console.log(line('raw GetItem', rawSerial));
    console.log(line('GET /organisations/{uuid}', apiSerial));
    const serialRatio = apiSerial.perSecond / rawSerial.perSecond;
    console.log(`gateway / raw = ${(serialRatio * 100).toFixed(0)}%`);
    dynamo.destroy();

    console.log('\nModule init (median of 15 cold imports, fresh Node process each):');
    const init = await measureInit();
    for (const f of init) {
      console.log(
        `${f.bundle.padEnd(22)} ${(f.bytes / 1024).toFixed(0).padStart(6)} KiB  ${f.initMs.toFixed(1).padStart(7)} ms  ${f.ratio.toFixed(2)}x bare  ${f.ratio <= 2 ? '' : '(over the 2x goal)'}`,
      );
    }
    const results = {
      when: new Date().toISOString(),
      node: process.version,
      throughput: { concurrency: CONCURRENCY, raw_per_s: rate(raw), api_per_s: rate(api), ratio },
      serial: { raw_per_s: rawSerial.perSecond, api_per_s: apiSerial.perSecond, ratio: serialRatio },
      init,
    };
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', 'latest.json'), JSON.stringify(results, null, 2));
  } finally {
    process.kill(-(service.child.pid as number), 'SIGINT');
  }
}

await main();
