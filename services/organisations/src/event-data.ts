import type { EventData, EventDataBuilders } from '@svc/events';
import { organisationResponse, organisationShape } from './domain/shapes';
import { organisationSchema } from './repository/organisation-repository';

/** The `data` of organisation events: the organisation as GET returns it, every account listed. */
export const organisationEventData: EventDataBuilders = {
  organisation: {
    schema: organisationResponse,
    build: async (_event, item) => {
      const organisation = organisationSchema.parse(item);
      return organisationShape(organisation, organisation.account_uuids);
    },
  } satisfies EventData<typeof organisationResponse>,
};
