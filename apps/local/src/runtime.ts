import { mkdtempSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SEARCH_PROJECTIONS, wireDomains } from '@svc/api';
import { logger } from '@svc/core';
import { applySeed, DEMO_SEED, parseSeed, type SeedFile, type SeedSummary } from '@svc/seed';
import { closeSearchDb, rebuildSearch, unfilledProjections } from '@svc/sql';
import { createTableIfMissing, resetDbClient } from '@svc/table';
import { startBackgroundTimers, stopBackgroundTimers } from './background';
import { startDynamoDbLocal } from './dynamodb-local';
import { type LocalSettings, removeRuntimeFile, useLocalAws, writeRuntimeFile } from './environment';
import { ensureLocalBus } from './event-bus';
import { createGateway, type Gateway } from './gateway';
import { ensureLocalMail, stopLocalMail } from './mail';
import { ensureLocalObjectStore } from './object-files';
import { ensureLocalQueues } from './queues';

export interface RunningService {
  url: string;
  dynamoEndpoint: string;
  gateway: Gateway;
  seed: SeedFile;
  summary: SeedSummary;
  stop(): Promise<void>;
}

/**
 * The local stand-ins the handlers reach, without the gateway or the timers: DynamoDB Local on
 * the data directory with the table and the seed, the SQS and EventBridge stand-ins and the object
 * store, each named to the handlers by the variables the template sets in AWS. `pnpm invoke`
 * runs one function against them; `startService` adds the gateway and the background work.
 */
export interface LocalStores {
  dynamoEndpoint: string;
  seed: SeedFile;
  summary: SeedSummary;
  /** The variables that point a handler at these stand-ins (what the template sets in AWS, and the SDK's endpoints); no secret. */
  environment(): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Variables the local runtime sets to point the handlers at its stand-ins: names, endpoints, the
 * SDK's region and dummy credentials, the local stage's switches. No secret is among them (the
 * hash key and the Stripe keys are not): they may be written down in the runtime file.
 */
const STAND_IN_VARIABLE =
  /^(AWS_ENDPOINT_URL_[A-Z0-9_]+|AWS_REGION|AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY|SVC_(TABLE_NAME|DATA_DIR|STAGE|WEBHOOK_ALLOW_PRIVATE|CAPTCHA_VERIFIER|BILLING_QUEUE_URL|DELIVERY_QUEUE_URL|MAIL_QUEUE_URL|MAIL_FROM|RECEIPTS_QUEUE_URL|RECEIPTS_BUCKET|EVENT_BUS_NAME|RECONCILIATION_BUCKET|PUBLIC_URL|CONNECT_URL))$/;

export async function startLocalStores(settings: LocalSettings): Promise<LocalStores> {
  const dynamo = await startDynamoDbLocal(settings.inMemory ? {} : { dataDir: settings.dataDir });
  try {
    useLocalAws(settings, dynamo.endpoint);
    // A client made before (in a process that ran something else first) points elsewhere.
    resetDbClient();
    await createTableIfMissing(settings.tableName);
    // The seed's organisations are projected into the search engine as they are written.
    wireDomains();
    const seed = parseSeed(settings.seedFile ? JSON.parse(readFileSync(settings.seedFile, 'utf8')) : DEMO_SEED);
    const summary = await applySeed(seed);
    const queues = await ensureLocalQueues();
    const bus = await ensureLocalBus();
    const objects = await ensureLocalObjectStore();
    await ensureLocalMail();
    return {
      dynamoEndpoint: dynamo.endpoint,
      seed,
      summary,
      environment: () =>
        Object.fromEntries(
          Object.entries(process.env).flatMap(([name, value]) =>
            STAND_IN_VARIABLE.test(name) && value !== undefined ? [[name, value]] : [],
          ),
        ),
      stop: async () => {
        await objects.close();
        await stopLocalMail();
        await queues.stop();
        await bus.stop();
        await closeSearchDb();
        await dynamo.stop();
      },
    };
  } catch (error) {
    await closeSearchDb();
    await dynamo.stop();
    throw error;
  }
}

/** Starts everything `pnpm start` runs: the local stores, the search engine filled, the gateway, timers. */
export async function startService(settings: LocalSettings): Promise<RunningService> {
  const stores = await startLocalStores(settings);
  try {
    const { seed, summary } = stores;
    // The embedded search engine opens (and migrates) now; projections it was never filled for
    // (a new data directory for it, data from before it existed, a projection added since) are
    // filled from the table first.
    const searchData = settings.inMemory ? mkdtempSync(join(tmpdir(), 'svc-search-')) : settings.dataDir;
    const unfilled = await unfilledProjections(SEARCH_PROJECTIONS);
    if (unfilled.length > 0) {
      const filled = await rebuildSearch({
        projections: unfilled,
        segments: 4,
        progressFile: join(searchData, 'search-rebuild.json'),
      });
      if (filled.projected > 0) {
        logger.info('Filled the search engine from the table', {
          ...filled,
          projections: unfilled.map((p) => p.name),
        });
      }
    }
    const gateway = await createGateway({ enableControl: true });
    const server: Server = await gateway.listen(settings.port);
    const { port } = server.address() as AddressInfo;
    process.env.SVC_PUBLIC_URL ??= `http://127.0.0.1:${port}`;
    // The hosted page's address, known only now when PORT=0 picked a free port.
    process.env.SVC_CONNECT_URL ??= `${process.env.SVC_PUBLIC_URL}/connect`;
    // Lets `pnpm ops` and `pnpm invoke` reach these stores while the service runs.
    if (!settings.inMemory)
      writeRuntimeFile(settings.dataDir, {
        dynamoEndpoint: stores.dynamoEndpoint,
        tableName: settings.tableName,
        pid: process.pid,
        // The data directory as a path from anywhere: a function run elsewhere (`pnpm invoke`) uses it too.
        environment: { ...stores.environment(), SVC_DATA_DIR: resolve(settings.dataDir) },
      });
    if (settings.background === 'timers')
      startBackgroundTimers((task, error) => logger.error('Background task failed', { task, error: error as Error }));
    return {
      url: `http://127.0.0.1:${port}`,
      dynamoEndpoint: stores.dynamoEndpoint,
      gateway,
      seed,
      summary,
      stop: async () => {
        await stopBackgroundTimers();
        server.closeAllConnections();
        await new Promise<void>((done) => server.close(() => done()));
        if (!settings.inMemory) removeRuntimeFile(settings.dataDir);
        await stores.stop();
      },
    };
  } catch (error) {
    await stores.stop();
    throw error;
  }
}
