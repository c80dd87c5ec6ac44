import { listClusters } from '../../../shared/application/tenancy/manage-tenants.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { ok } from '../../../shared/http/http-types.ts';

/** The clusters: ackline is one. */
export function clusterRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/v2/clusters',
      handler: async (request) => ok(listClusters(ports, request.principal)),
    },
  ];
}
