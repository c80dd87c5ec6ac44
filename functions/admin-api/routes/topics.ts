import {
  createTopic,
  deleteTopic,
  listPartitionedTopics,
  listTopics,
} from '../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { queryBoolean } from '../../../shared/http/request-parsing.ts';
import { namespaceOfListing, TOPIC, topicOf, V2 } from './admin-paths.ts';

/** A namespace's topics (all, or the partitioned ones), and creating and deleting a non-partitioned topic. */
export function topicRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'GET',
      path: V2,
      handler: async (request) => {
        const namespace = namespaceOfListing(request);
        return ok(await listTopics(ports, request.principal, namespace.domain, namespace.namespaceName));
      },
    },
    {
      method: 'GET',
      path: `${V2}/partitioned`,
      handler: async (request) => {
        const namespace = namespaceOfListing(request);
        return ok(
          await listPartitionedTopics(ports, request.principal, namespace.domain, namespace.namespaceName),
        );
      },
    },
    {
      method: 'PUT',
      path: TOPIC,
      handler: async (request) => {
        await createTopic(ports, request.principal, topicOf(request), 0);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: TOPIC,
      handler: async (request) => {
        await deleteTopic(ports, request.principal, topicOf(request), {
          force: queryBoolean(request, 'force'),
        });
        return noContent();
      },
    },
  ];
}
