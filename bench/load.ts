import { Agent, request } from 'node:http';

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  errors: number;
  p50ms: number;
  p95ms: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Runs `operation` from `concurrency` loops for a bounded time and count; stops by itself. */
export async function runLoad(
  operation: () => Promise<boolean>,
  options: { seconds: number; concurrency: number; maxRequests?: number },
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const max = options.maxRequests ?? 1_000_000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline && latencies.length + errors < max) {
        const t = performance.now();
        const ok = await operation().catch(() => false);
        if (ok) latencies.push(performance.now() - t);
        else errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    errors,
    p50ms: percentile(latencies, 50),
    p95ms: percentile(latencies, 95),
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** A GET over a kept-alive connection; true on the expected status. */
export function httpGet(url: string, headers: Record<string, string>, expectStatus = 200): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === expectStatus));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A POST of a JSON body over a kept-alive connection; true on the expected status. */
export async function httpPost(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  expectStatus = 201,
): Promise<boolean> {
  return (await httpPostJson(url, headers, body)).status === expectStatus;
}

/** A POST of a JSON body over a kept-alive connection: the status and the parsed answer. */
export function httpPostJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': payload.length },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString());
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Times `operation` `runs` times one after another; p50 and p95 in milliseconds. */
export async function latency(
  operation: () => Promise<unknown>,
  runs: number,
): Promise<{ p50ms: number; p95ms: number }> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await operation();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50ms: percentile(samples, 50), p95ms: percentile(samples, 95) };
}
