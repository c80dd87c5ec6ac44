import {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
} from '../../../shared/application/subscriptions/manage-subscriptions.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { parseSubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { initialPositionOf } from '../../../shared/http/admin-requests.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { jsonBody, queryBoolean, queryValue } from '../../../shared/http/request-parsing.ts';
import { SUBSCRIPTION, TOPIC, topicOf } from './admin-paths.ts';

/** A topic's subscriptions: create one (type and initial position), delete one, list them. */
export function subscriptionRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'PUT',
      path: SUBSCRIPTION,
      handler: async (request) => {
        const type = parseSubscriptionType(queryValue(request, 'subscriptionType') ?? 'Exclusive');
        await createSubscription(ports, request.principal, topicOf(request), {
          name: request.params.subscription as string,
          type,
          initialPosition: initialPositionOf(jsonBody(request)),
        });
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: SUBSCRIPTION,
      handler: async (request) => {
        await deleteSubscription(ports, request.principal, topicOf(request), {
          name: request.params.subscription as string,
          force: queryBoolean(request, 'force'),
        });
        return noContent();
      },
    },
    {
      method: 'GET',
      path: `${TOPIC}/subscriptions`,
      handler: async (request) => ok(await listSubscriptions(ports, request.principal, topicOf(request))),
    },
  ];
}
