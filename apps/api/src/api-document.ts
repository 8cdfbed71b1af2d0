import { describeRoutes } from './api-description';
import { ROUTE_TABLE } from './route-table';

/** The service's API description: the route table's (see `describeRoutes`). */
export function describeApi(): Record<string, unknown> {
  return describeRoutes(ROUTE_TABLE);
}
