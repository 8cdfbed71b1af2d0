import { workerHandler } from '@svc/core';
import { streamProjector } from '@svc/sql';
import { SEARCH_PROJECTIONS } from './search-projections';

/** The search projector's Lambda entry: the table's stream → every projection's rows. */
export const handler = workerHandler('search-projector', streamProjector(SEARCH_PROJECTIONS));
