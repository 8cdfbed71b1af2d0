import { streamProjector } from '@svc/sql';
import { SEARCH_PROJECTIONS } from './search-projections';

/** The search projector's Lambda entry: the table's stream → every projection's rows. */
export const handler = streamProjector(SEARCH_PROJECTIONS);
