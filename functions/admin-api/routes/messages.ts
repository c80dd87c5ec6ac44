import { getMessageById, peekMessage } from '../../../shared/application/topics/read-messages.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { Position } from '../../../shared/domain/position.ts';
import type { Route } from '../../../shared/http/http-types.ts';
import { ok } from '../../../shared/http/http-types.ts';
import { safeInteger } from '../../../shared/http/request-parsing.ts';
import { SUBSCRIPTION, TOPIC, topicOf } from './admin-paths.ts';

/** Reading messages without consuming them: peek the nth of a subscription's backlog, or get one by id. */
export function messageRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'GET',
      path: `${SUBSCRIPTION}/position/{position}`,
      handler: async (request) =>
        ok(
          await peekMessage(ports, request.principal, topicOf(request), {
            subscriptionName: request.params.subscription as string,
            messagePosition: safeInteger(request.params.position, 'Message position', 1),
          }),
        ),
    },
    {
      method: 'GET',
      path: `${TOPIC}/ledger/{ledgerId}/entry/{entryId}`,
      handler: async (request) =>
        ok(
          await getMessageById(
            ports,
            request.principal,
            topicOf(request),
            Position.of(request.params.ledgerId as string, request.params.entryId as string),
          ),
        ),
    },
  ];
}
