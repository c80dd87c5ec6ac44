import {
  grantPermission,
  listPermissions,
  type PermissionResource,
  parseActions,
  revokePermission,
} from '../../../shared/application/tenancy/manage-permissions.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import type { HttpRequest, Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { jsonBody } from '../../../shared/http/request-parsing.ts';
import { NAMESPACE, namespaceOf, TOPIC, topicOf } from './admin-paths.ts';

/** A namespace's grants (before the generic {domain} routes, which would also match). */
export function namespacePermissionRoutes(ports: UseCasePorts): Route[] {
  return permissionRoutes(ports, NAMESPACE, namespaceOf);
}

/** A topic's grants. */
export function topicPermissionRoutes(ports: UseCasePorts): Route[] {
  return permissionRoutes(ports, TOPIC, (request) => ({ topic: topicOf(request) }));
}

/** GET the grants, POST/DELETE one role's on a namespace or a topic (Pulsar's paths). */
function permissionRoutes(
  ports: UseCasePorts,
  base: string,
  resourceOf: (request: HttpRequest) => PermissionResource,
): Route[] {
  return [
    {
      method: 'GET',
      path: `${base}/permissions`,
      handler: async (request) => ok(await listPermissions(ports, request.principal, resourceOf(request))),
    },
    {
      method: 'POST',
      path: `${base}/permissions/{role}`,
      handler: async (request) => {
        const actions = parseActions(jsonBody(request));
        await grantPermission(ports, request.principal, resourceOf(request), {
          role: request.params.role as string,
          actions,
        });
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${base}/permissions/{role}`,
      handler: async (request) => {
        await revokePermission(ports, request.principal, resourceOf(request), request.params.role as string);
        return noContent();
      },
    },
  ];
}
