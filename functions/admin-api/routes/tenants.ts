import {
  createTenant,
  deleteTenant,
  getTenant,
  listTenants,
  tenantInfoOf,
} from '../../../shared/application/tenancy/manage-tenants.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { jsonBody, queryBoolean } from '../../../shared/http/request-parsing.ts';

/** Tenants (issue 13), before the generic {domain} routes, which would also match. */
export function tenantRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/v2/tenants',
      handler: async (request) => ok(await listTenants(ports, request.principal)),
    },
    {
      method: 'GET',
      path: '/admin/v2/tenants/{tenant}',
      handler: async (request) =>
        ok(await getTenant(ports, request.principal, request.params.tenant as string)),
    },
    {
      method: 'PUT',
      path: '/admin/v2/tenants/{tenant}',
      handler: async (request) => {
        const info = tenantInfoOf(jsonBody(request));
        await createTenant(ports, request.principal, request.params.tenant as string, info);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: '/admin/v2/tenants/{tenant}',
      handler: async (request) => {
        const force = queryBoolean(request, 'force');
        await deleteTenant(ports, request.principal, request.params.tenant as string, force);
        return noContent();
      },
    },
  ];
}
