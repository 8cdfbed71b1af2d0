import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS_ASSETS, DOMAINS, describeApi } from '@svc/api';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { bundledCode, bundledSources } from './support/bundle-files';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService } from './support/template-model';

useSynthesizedApp('as-deployed');

/** The synthesised platform function's bundle directory and its environment. */
function platformAsset() {
  const { outdir } = synthesized();
  const template = templateOf('prod');
  const fn = functionsByService(template).get('platform');
  if (!fn) throw new Error('no platform function');
  const resource = z
    .object({ Properties: z.object({ Code: z.object({ S3Key: z.string() }) }) })
    .parse(template.findResources('AWS::Lambda::Function')[fn.logicalId]);
  return {
    dir: join(outdir, `asset.${resource.Properties.Code.S3Key.replace(/\.zip$/, '')}`),
    environment: fn.properties.Environment.Variables as Record<string, string>,
  };
}

/**
 * One request to the platform function's asset as Lambda runs it: in a fresh Node process outside
 * the repo (cwd `/`), with only its template's environment.
 */
function callPlatform(
  path: string,
  routeKey = `GET ${path}`,
  pathParameters?: Record<string, string>,
): { statusCode: number; body: string } {
  const { dir, environment } = platformAsset();
  const event = {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    // Behind the edge (staging, prod) the function takes only what CloudFront sends, with the
    // origin secret it is given (here the template's unresolved reference, as text).
    headers: {
      host: 'api.example.org',
      ...(environment.SVC_EDGE_ORIGIN_SECRET
        ? { 'x-svc-origin-verify': String(environment.SVC_EDGE_ORIGIN_SECRET) }
        : {}),
    },
    ...(pathParameters ? { pathParameters } : {}),
    requestContext: {
      http: { method: 'GET', path, sourceIp: '203.0.113.1' },
      requestId: 'r1',
      routeKey,
    },
    isBase64Encoded: false,
  };
  const script = `const { handler } = await import(${JSON.stringify(`file://${join(dir, 'index.mjs')}`)});
const out = await handler(${JSON.stringify(event)}, { awsRequestId: 'r1', functionName: 'svc-platform', getRemainingTimeInMillis: () => 10000 });
process.stdout.write(JSON.stringify(out));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: '/',
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'eu-central-2',
      ...Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, String(value)])),
      NODE_OPTIONS: '',
    },
    encoding: 'utf8',
    // Swagger UI's script is about 1.4 MB.
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(output) as { statusCode: number; body: string };
}

describe('the platform bundle', () => {
  it('carries the API description built at bundle time, and none of the domains’ code', () => {
    const { dir } = platformAsset();
    const sources = bundledSources(dir);
    expect(sources.some((source) => source.endsWith(DOMAINS.platform.entry))).toBe(true);
    expect(sources.filter((source) => /services\/[a-z]+\/src\//.test(source))).toEqual([]);
    expect(sources.some((source) => source.endsWith('apps/api/src/route-table.ts'))).toBe(false);
    // The description is a file beside the code (read at the first request), not code parsed at every cold start.
    expect(JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8'))).toEqual(describeApi());
    expect(bundledCode(dir)).not.toContain('"operationId"');
  });

  it('carries the API reference’s assets as files beside the code, not in it', () => {
    const { dir } = platformAsset();
    for (const file of DOCS_ASSETS) {
      expect(readFileSync(join(dir, 'docs-assets', file), 'utf8').length, file).toBeGreaterThan(10_000);
    }
    expect(bundledCode(dir)).not.toContain('SwaggerUIBundle=');
  });

  it('serves that description at /openapi.json, equal to the route table’s, outside the repo with only its template’s environment', () => {
    const response = callPlatform('/openapi.json');
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual(JSON.parse(JSON.stringify(describeApi())));
  }, 60_000);

  it('serves the reference’s assets from beside its code, outside the repo (no swagger-ui-dist to fall back on)', () => {
    for (const file of DOCS_ASSETS) {
      const response = callPlatform(`/docs/assets/${file}`, 'GET /docs/assets/{file}', { file });
      expect(response.statusCode, file).toBe(200);
      expect(response.body.length, file).toBeGreaterThan(10_000);
    }
  }, 60_000);
});
