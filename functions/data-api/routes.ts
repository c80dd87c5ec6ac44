import type { Dependencies } from '../../shared/adapters/create-dependencies.ts';
import type { Route } from '../../shared/http/http-types.ts';

/** Produce and consume paths served by this function. */
export function dataRoutes(_deps: Dependencies): Route[] {
  return [];
}
