import { asFunction } from '@svc/core';
import { sweepDueDeliveries } from '@svc/webhooks';
import { registerBackgroundTask } from './background';
import { drainBus, ensureLocalBus } from './event-bus';
import { deliveryPoller, drainDeliveryQueue, ensureLocalQueues } from './queues';
import { pollStream } from './stream-poller';

/**
 * The event pipeline on one machine, in AWS's order: the table stream → the stream publisher →
 * the bus → fan-out → the delivery queue → the delivery worker; retries wait in the due index
 * until the sweeper (scheduled every minute in AWS) sends them back to the queue. `settle()`
 * runs these until nothing moves, by the service clock.
 */
export async function ensureLocalPipeline(): Promise<void> {
  await Promise.all([ensureLocalBus(), ensureLocalQueues()]);
}

registerBackgroundTask({
  name: 'event-stream',
  intervalMs: 500,
  runOnce: async () => {
    await ensureLocalPipeline();
    return pollStream();
  },
});
registerBackgroundTask({ name: 'event-bus', intervalMs: 500, runOnce: drainBus });
registerBackgroundTask({
  name: 'delivery-sweeper',
  intervalMs: 5_000,
  runOnce: async () => {
    await ensureLocalPipeline();
    return asFunction('delivery-sweeper', sweepDueDeliveries);
  },
});
registerBackgroundTask({
  name: 'delivery-queue',
  intervalMs: 500,
  runOnce: async () => {
    await ensureLocalPipeline();
    return drainDeliveryQueue();
  },
  // While the service runs: invocations started as the event source starts them, none waiting
  // for another (a slow receiver holds its own invocation only).
  tick: async () => {
    await ensureLocalPipeline();
    return deliveryPoller.tick();
  },
  idle: () => deliveryPoller.idle(),
});
