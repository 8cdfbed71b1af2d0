import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerBackgroundTask, settle, startBackgroundTimers, stopBackgroundTimers } from './background';

/** A task that starts when its timer fires and finishes only when the test says so. */
function gatedTask(name: string) {
  const state = { started: 0, finished: 0, release: () => {} };
  registerBackgroundTask({
    name,
    intervalMs: 100,
    settles: false,
    runOnce: () =>
      new Promise<number>((done) => {
        state.started += 1;
        state.release = () => {
          state.finished += 1;
          done(1);
        };
      }),
  });
  return state;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('background timers', () => {
  it('stopping waits for a run under way and starts no run that waited behind it, so the stand-ins outlive them', async () => {
    vi.useFakeTimers();
    const task = gatedTask('gated-finishes');
    startBackgroundTimers(() => {});
    // The first tick starts a run; the next two find it running and wait behind it.
    await vi.advanceTimersByTimeAsync(300);
    expect(task.started).toBe(1);
    let stopped = false;
    const stopping = stopBackgroundTimers().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stopped).toBe(false);
    task.release();
    await stopping;
    expect(task.finished).toBe(1);
    // The ticks that waited behind it did not start runs of their own once stopping had begun.
    await vi.advanceTimersByTimeAsync(0);
    expect(task.started).toBe(1);
    // No timer fires after the stop.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(task.started).toBe(1);
  });

  it('stops within its bound even when a run never ends', async () => {
    vi.useFakeTimers();
    const task = gatedTask('gated-hangs');
    startBackgroundTimers(() => {});
    await vi.advanceTimersByTimeAsync(100);
    expect(task.started).toBeGreaterThan(0);
    let stopped = false;
    const stopping = stopBackgroundTimers(2_000).then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(stopped).toBe(true);
  });

  it('settle leaves schedules alone', async () => {
    const task = gatedTask('gated-schedule');
    expect(await settle()).toBe(0);
    expect(task.started).toBe(0);
  });
});
