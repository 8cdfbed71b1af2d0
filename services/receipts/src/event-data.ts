import type { EventData, EventDataBuilders } from '@svc/events';
import { receiptResponse, receiptShape } from './domain/shapes';
import { receiptRecordSchema } from './repository/receipt-repository';

/** The `data` of receipt events: the receipt as GET /receipts/{uuid} returns it. */
export const receiptEventData: EventDataBuilders = {
  receipt: {
    schema: receiptResponse,
    build: async (_event, item) => receiptShape(receiptRecordSchema.parse(item)),
  } satisfies EventData<typeof receiptResponse>,
};
