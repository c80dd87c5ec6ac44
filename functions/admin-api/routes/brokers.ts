import type { Route } from '../../../shared/http/http-types.ts';
import { ok } from '../../../shared/http/http-types.ts';

/** The broker's health check. */
export function brokerRoutes(): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/v2/brokers/health',
      // Pulsar answers the plain text "ok"; a JSON string keeps every answer JSON.
      handler: async () => ok('ok'),
    },
  ];
}
