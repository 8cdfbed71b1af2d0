import { deferred } from '@svc/core';
import type { EventData, EventDataBuilders } from '@svc/events';
import { processResponse, processShape } from './domain/shapes';
import { processRecordSchema } from './repository/process-repository';

/** The process in an event: without its token and the link that carries it. */
const processEventData = deferred(() => processResponse.unwrap().omit({ token: true, onboarding_url: true }));

/** The `data` of onboarding events: the process as its GET returns it, from the written item. */
export const onboardingEventData: EventDataBuilders = {
  onboarding_process: {
    schema: processEventData,
    build: async (_event, item) => {
      // The process without its credential: the token (and the link that carries it) would be
      // stored with every delivery and travel through the bus and queues. Its GET shows both.
      const {
        token: _token,
        onboarding_url: _url,
        ...data
      } = processShape(processRecordSchema.parse({ token: '', ...item }), undefined);
      return data;
    },
  } satisfies EventData<typeof processEventData>,
};
