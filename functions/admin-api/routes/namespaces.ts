import {
  createNamespace,
  deleteNamespace,
  getNamespacePolicies,
  listNamespaces,
} from '../../../shared/application/tenancy/manage-namespaces.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { requireNamespaceCreateBody } from '../../../shared/http/admin-requests.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { jsonBody, queryBoolean } from '../../../shared/http/request-parsing.ts';
import { NAMESPACE, namespaceNameOf } from './admin-paths.ts';

/** Namespaces (issue 13), before the generic {domain} routes, which would also match. */
export function namespaceRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/v2/namespaces/{tenant}',
      handler: async (request) =>
        ok(await listNamespaces(ports, request.principal, request.params.tenant as string)),
    },
    {
      method: 'GET',
      path: NAMESPACE,
      handler: async (request) =>
        ok(await getNamespacePolicies(ports, request.principal, namespaceNameOf(request))),
    },
    {
      method: 'PUT',
      path: NAMESPACE,
      handler: async (request) => {
        const name = namespaceNameOf(request);
        requireNamespaceCreateBody(jsonBody(request));
        await createNamespace(ports, request.principal, name);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: NAMESPACE,
      handler: async (request) => {
        const name = namespaceNameOf(request);
        await deleteNamespace(ports, request.principal, name, queryBoolean(request, 'force'));
        return noContent();
      },
    },
  ];
}
