/** EventBridge Scheduler target: one billing run. Reads SVC_BILLING_QUEUE_URL. */
export const handler = async (): Promise<{ due: number }> => ({ due: 0 });
