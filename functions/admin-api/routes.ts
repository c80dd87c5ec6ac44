import type { Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { ok, type Route } from '../../shared/http/http-types.ts';

/** Pulsar admin REST paths served by this function. */
export function adminRoutes(_deps: Dependencies): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/v2/brokers/health',
      // Pulsar answers the plain text "ok"; a JSON string keeps every answer JSON.
      handler: async () => ok('ok'),
    },
  ];
}
