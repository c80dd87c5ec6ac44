import {
  registerProducer,
  releaseProducer,
  renewProducer,
} from '../../shared/application/producers/producer-access.ts';
import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';
import { NotFoundError } from '../../shared/domain/errors.ts';
import type { TopicName } from '../../shared/domain/topic-name.ts';
import { type HttpRequest, noContent, ok, type Route } from '../../shared/http/http-types.ts';
import { PRODUCER_ID, parseProducerRegistration } from '../../shared/http/produce-request.ts';
import { jsonBody } from '../../shared/http/request-parsing.ts';

/**
 * Producer access modes (docs/design/storage.md#producer-access-modes): register a producer, renew an
 * exclusive producer's lease, release it.
 * adapter (this) -> use case (producers/producer-access.ts) -> ProducerAccessStore
 */
export function producerRoutes(ports: UseCasePorts, topicOf: (request: HttpRequest) => TopicName): Route[] {
  const base = '/topics/{domain}/{tenant}/{namespace}/{topic}/producers';
  return [
    {
      method: 'POST',
      path: base,
      handler: async (request) =>
        ok(
          await registerProducer(
            ports,
            request.principal,
            topicOf(request),
            parseProducerRegistration(jsonBody(request)),
          ),
        ),
    },
    {
      method: 'POST',
      path: `${base}/{producerId}/heartbeat`,
      handler: async (request) => {
        await renewProducer(ports, request.principal, topicOf(request), producerIdOf(request));
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${base}/{producerId}`,
      handler: async (request) => {
        await releaseProducer(ports, request.principal, topicOf(request), producerIdOf(request));
        return noContent();
      },
    },
  ];
}

function producerIdOf(request: HttpRequest): string {
  const id = request.params.producerId ?? '';
  if (!PRODUCER_ID.test(id)) throw new NotFoundError(`Producer registration ${id} not found`);
  return id;
}
