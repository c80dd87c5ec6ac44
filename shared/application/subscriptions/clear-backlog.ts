import { TopicNotFoundError } from '../../domain/catalog-errors.ts';
import { positionBefore } from '../../domain/position.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { markDeleteForward } from '../engine/reset-cursor.ts';
import { endOfLog } from '../topics/find-by-publish-time.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import {
  type CursorOperationOutcome,
  type CursorOperationRequest,
  runCursorOperation,
} from './cursor-operation.ts';

/**
 * Pulsar's `skip_all` (clear-backlog): on every partition the call addresses, the subscription's
 * mark-delete moves to the last entry published so far, so its backlog is empty; messages
 * published after the call are delivered as usual. Consumers stay connected; what they hold is
 * acknowledged by the move. Audited; `dryRun` answers where each cursor would go.
 * Cost per partition: the ledger state, the head (read, one write).
 */
export function clearBacklog(
  ports: UseCasePorts,
  request: CursorOperationRequest & { readonly subscriptionName: string },
): Promise<CursorOperationOutcome> {
  return runCursorOperation(ports, request, {
    operation: 'skipAll',
    target: 'all messages',
    move: async ({ partition, subscription }, dryRun) => {
      const state = await ports.ledger.state(partition);
      // No state: a topic deletion racing the call detached the partition (404, not a 500).
      if (!state) throw new TopicNotFoundError(partition.toString());
      return markDeleteForward(
        engineOf(ports),
        { partition, cursorId: subscription.cursorId, type: subscription.type },
        positionBefore(endOfLog(state)),
        { dryRun },
      );
    },
  });
}
