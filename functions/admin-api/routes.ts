import type { Dependencies } from '../../shared/adapters/create-dependencies.ts';
import type { Route } from '../../shared/http/http-types.ts';
import { acknowledgeMessageRoutes } from './routes/acknowledge-message.ts';
import { brokerRoutes } from './routes/brokers.ts';
import { clusterRoutes } from './routes/clusters.ts';
import { cursorOperationRoutes } from './routes/cursor-operations.ts';
import { messageRoutes } from './routes/messages.ts';
import { namespaceRoutes } from './routes/namespaces.ts';
import { partitionedTopicRoutes } from './routes/partitioned-topics.ts';
import { namespacePermissionRoutes, topicPermissionRoutes } from './routes/permissions.ts';
import { namespacePolicyRoutes, topicPolicyRoutes } from './routes/policies.ts';
import { scheduledRoutes } from './routes/scheduled.ts';
import { statsRoutes } from './routes/stats.ts';
import { subscriptionRoutes } from './routes/subscriptions.ts';
import { tenantRoutes } from './routes/tenants.ts';
import { topicRoutes } from './routes/topics.ts';

/**
 * Pulsar admin REST paths served by this function, one file per resource under routes/. Each route
 * parses the request, calls one use case and shapes the answer.
 *
 * The order is the router's: a path with parameters is matched against the routes of its method in
 * this order, first match wins. So the `/admin/v2/namespaces/...` and `/admin/v2/tenants/...` paths
 * come before the generic `/admin/v2/{domain}/{tenant}/{namespace}` ones, which would also match
 * them, and v2 before Pulsar's unversioned v1 base.
 */
export function adminRoutes(deps: Dependencies): Route[] {
  const { ports } = deps;
  return [
    ...namespacePolicyRoutes(ports),
    ...brokerRoutes(),
    ...clusterRoutes(ports),
    ...tenantRoutes(ports),
    ...namespaceRoutes(ports),
    ...namespacePermissionRoutes(ports),
    ...topicRoutes(ports),
    ...partitionedTopicRoutes(ports),
    ...subscriptionRoutes(ports),
    ...statsRoutes(ports),
    ...messageRoutes(ports),
    ...cursorOperationRoutes(ports),
    ...topicPolicyRoutes(ports),
    ...acknowledgeMessageRoutes(ports),
    ...scheduledRoutes(ports),
    ...topicPermissionRoutes(ports),
  ];
}
