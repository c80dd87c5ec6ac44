import {
  createTopic,
  deleteTopic,
  getPartitionedMetadata,
} from '../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { NotAcceptableError, ValidationError } from '../../../shared/domain/errors.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { jsonBody, queryBoolean } from '../../../shared/http/request-parsing.ts';
import { TOPIC, topicOf } from './admin-paths.ts';

/** A partitioned topic: create with a partition count, delete, read its metadata. */
export function partitionedTopicRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'PUT',
      path: `${TOPIC}/partitions`,
      handler: async (request) => {
        const partitions = jsonBody(request);
        if (typeof partitions !== 'number' || !Number.isSafeInteger(partitions)) {
          throw new ValidationError(`The body must be the number of partitions, an integer >= 1`);
        }
        // Pulsar answers 406 for a count out of range (createTopic checks the upper bound).
        if (partitions < 1) throw new NotAcceptableError('Number of partitions should be more than 0');
        await createTopic(ports, request.principal, topicOf(request), partitions);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${TOPIC}/partitions`,
      handler: async (request) => {
        await deleteTopic(ports, request.principal, topicOf(request), {
          partitionedOnly: true,
          force: queryBoolean(request, 'force'),
        });
        return noContent();
      },
    },
    {
      method: 'GET',
      path: `${TOPIC}/partitions`,
      handler: async (request) =>
        ok(await getPartitionedMetadata(ports, request.principal, topicOf(request))),
    },
  ];
}
