import { getInternalStats, getTopicStats } from '../../../shared/application/topics/topic-stats.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { ok } from '../../../shared/http/http-types.ts';
import { queryBoolean, queryValue } from '../../../shared/http/request-parsing.ts';
import { TOPIC, topicOf } from './admin-paths.ts';

/** A topic's stats, a partitioned topic's (summed, and per partition) and the managed ledger's internal stats. */
export function statsRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'GET',
      path: `${TOPIC}/stats`,
      handler: async (request) => ok(await getTopicStats(ports, request.principal, topicOf(request))),
    },
    {
      method: 'GET',
      path: `${TOPIC}/partitioned-stats`,
      handler: async (request) => {
        const perPartition = queryValue(request, 'perPartition');
        return ok(
          await getTopicStats(ports, request.principal, topicOf(request), {
            partitionedOnly: true,
            // Pulsar's default: true.
            perPartition:
              perPartition === undefined || perPartition === '' || queryBoolean(request, 'perPartition'),
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${TOPIC}/internalStats`,
      handler: async (request) => ok(await getInternalStats(ports, request.principal, topicOf(request))),
    },
  ];
}
