import type { Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { publishMessages } from '../../shared/application/publish-messages.ts';
import { NotFoundError } from '../../shared/domain/errors.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import { ok, type Route } from '../../shared/http/http-types.ts';
import { parseProduceRequest } from '../../shared/http/produce-request.ts';
import { jsonBody } from '../../shared/http/request-parsing.ts';

/** Produce and consume paths served by this function. */
export function dataRoutes(deps: Dependencies): Route[] {
  const { ports } = deps;
  return [
    {
      method: 'POST',
      path: '/topics/{domain}/{tenant}/{namespace}/{topic}',
      handler: async (request) => {
        const { domain, topic } = request.rawParams as Record<string, string>;
        const { tenant, namespace } = request.params as Record<string, string>;
        if (domain !== 'persistent' && domain !== 'non-persistent') {
          throw new NotFoundError(`No route for ${request.method} ${request.path}`);
        }
        const name = TopicName.fromRest(domain, tenant as string, namespace as string, topic as string);
        const messages = parseProduceRequest(jsonBody(request), ports.clock.nowMs());
        const results = await publishMessages(ports, request.principal, name, messages, deps.router);
        return ok({ messagePublishResults: results, schemaVersion: 0 });
      },
    },
  ];
}
