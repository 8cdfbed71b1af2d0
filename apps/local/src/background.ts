/**
 * The local stand-in for everything AWS runs in the background (stream pollers, queue workers,
 * the billing schedule). Each capability registers a task that processes what is due and says
 * how many items it handled; `settle()` runs them all until nothing is left.
 */
export interface BackgroundTask {
  name: string;
  /** How often the timer runs it while the service is up. */
  intervalMs: number;
  /** Processes what is due now (by the service clock); returns the number of items handled. */
  runOnce(): Promise<number>;
  /** False for schedules (the billing run) that `settle()` must not fire; default true. */
  settles?: boolean;
  /**
   * What the timer runs instead of `runOnce`, when set: work started and left running (a queue's
   * poller starting invocations as Lambda's event source does, without waiting for earlier ones
   * to end). `runOnce` (settle's) must then wait for what `tick` left running.
   */
  tick?(): Promise<number>;
  /** Resolves once nothing `tick` started is running (stopping waits for it). */
  idle?(): Promise<void>;
}

const tasks: BackgroundTask[] = [];
const names = new Set<string>();
const timers: NodeJS.Timeout[] = [];
const running = new Map<string, Promise<number>>();
let stopping = false;
/** How long stopping waits for runs under way (a delivery's own timeout is 10 s). */
const STOP_WAIT_MS = 5_000;

/** Registers a task once (a second registration under the same name is ignored). */
export function registerBackgroundTask(task: BackgroundTask): void {
  if (names.has(task.name)) return;
  names.add(task.name);
  tasks.push(task);
}

/**
 * Runs a task unless it is already running; a caller that finds it running (settle, while a
 * timer's run is in flight) waits for that run and then runs it again, so "nothing handled"
 * always means nothing was left.
 */
async function runGuarded(task: BackgroundTask, fromTimer = false): Promise<number> {
  const inFlight = running.get(task.name);
  if (inFlight) await inFlight.catch(() => 0);
  // A timer's run that waited behind another must not start once stopping has begun.
  if (fromTimer && stopping) return 0;
  if (running.has(task.name)) return runGuarded(task, fromTimer);
  const run = task.runOnce();
  running.set(task.name, run);
  try {
    return await run;
  } finally {
    running.delete(task.name);
  }
}

/** Runs every task until a whole round handles nothing; returns the items handled in all. */
export async function settle(maxRounds = 1000): Promise<number> {
  let total = 0;
  for (let round = 0; round < maxRounds; round++) {
    let handled = 0;
    for (const task of tasks) if (task.settles !== false) handled += await runGuarded(task);
    total += handled;
    if (handled === 0) return total;
  }
  throw new Error(`Background work did not settle within ${maxRounds} rounds`);
}

/** A task's `tick`, one at a time (a tick only starts work; it does not wait for it). */
function tickGuarded(tick: () => Promise<number>): () => Promise<number> {
  let ticking = false;
  return async () => {
    if (ticking || stopping) return 0;
    ticking = true;
    try {
      return await tick();
    } finally {
      ticking = false;
    }
  };
}

export function startBackgroundTimers(onError: (task: string, error: unknown) => void): void {
  stopping = false;
  for (const task of tasks) {
    const tick = task.tick ? tickGuarded(task.tick) : () => runGuarded(task, true);
    const timer = setInterval(() => {
      tick().catch((error: unknown) => onError(task.name, error));
    }, task.intervalMs);
    timer.unref();
    timers.push(timer);
  }
}

/**
 * Stops the timers and waits for the runs already under way, so the stand-ins they use (queues,
 * bus, DynamoDB Local) are stopped only after them. What a run leaves undone stays where it was
 * (queue, stream, due index) for the next start.
 */
export async function stopBackgroundTimers(waitMs = STOP_WAIT_MS): Promise<void> {
  stopping = true;
  for (const timer of timers.splice(0)) clearInterval(timer);
  let timeout: NodeJS.Timeout | undefined;
  let waited = false;
  // A drain of a long back-log is not waited for to its end: Ctrl-C must stop promptly.
  const deadline = new Promise<void>((done) => {
    timeout = setTimeout(() => {
      waited = true;
      done();
    }, waitMs);
  });
  // Runs that were waiting behind others may still start (settle's): wait until none is left.
  while (running.size > 0 && !waited) {
    await Promise.race([Promise.all([...running.values()].map((run) => run.catch(() => 0))), deadline]);
  }
  if (!waited) {
    await Promise.race([Promise.all(tasks.map((task) => task.idle?.().catch(() => undefined))), deadline]);
  }
  clearTimeout(timeout);
}
