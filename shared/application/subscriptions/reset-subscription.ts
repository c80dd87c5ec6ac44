import { PreconditionFailedError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { ringAt } from '../consumers/doorbells.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { type CursorMove, resetCursor } from '../engine/reset-cursor.ts';
import { endOfLog, firstPublishedAtOrAfter } from '../topics/find-by-publish-time.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { withCursorLease } from './cursor-lease.ts';
import {
  type CursorOperationOutcome,
  type CursorOperationRequest,
  type CursorTarget,
  runCursorOperation,
} from './cursor-operation.ts';

/**
 * Pulsar's `resetcursor/{timestamp}`: every partition's subscription rewinds (or moves forward) to
 * the first message published at or after `timestampMs` (the end of the log when none is), as
 * the engine's resetCursor describes. Audited; `dryRun` answers where each cursor would go.
 */
export function resetCursorToTimestamp(
  ports: UseCasePorts,
  request: CursorOperationRequest & { readonly subscriptionName: string; readonly timestampMs: number },
): Promise<CursorOperationOutcome> {
  return runCursorOperation(ports, request, {
    operation: 'resetCursor',
    target: `timestamp ${request.timestampMs}`,
    move: async (target, dryRun) =>
      resetTo(
        ports,
        target,
        await firstPublishedAtOrAfter(ports.ledger, target.partition, request.timestampMs),
        dryRun,
      ),
  });
}

/**
 * Pulsar's `resetcursor` with a MessageId body: the subscription starts over at that message
 * (after it with `isExcluded`). The message's ledger names its partition: on a partitioned topic
 * only that partition's cursor moves, as a consumer's seek to a message id of one partition does
 * (Pulsar's REST call answers 405 there; the partition is known here, so ackline does it).
 * 412 when the ledger is not one of the topic's, `partitionIndex` names another partition, or
 * the entry is past the end of its ledger (Pulsar: "Unable to find position").
 */
export function resetCursorToMessageId(
  ports: UseCasePorts,
  request: CursorOperationRequest & {
    readonly subscriptionName: string;
    readonly position: Position;
    /** -1 or absent: not given. */
    readonly partitionIndex?: number;
    readonly isExcluded: boolean;
  },
): Promise<CursorOperationOutcome> {
  const { position } = request;
  const unable = (why: string) =>
    new PreconditionFailedError(`Unable to find position ${position.toString()} on ${request.topic}: ${why}`);
  return runCursorOperation(ports, request, {
    operation: 'resetCursor',
    target: `${position.toString()}${request.isExcluded ? ' (excluded)' : ''}`,
    partitions: async (resolved) => {
      const owner = await ports.ledger.knownOwnerOf(position.ledgerId);
      const partition = resolved.partitions.find((candidate) => owner?.equals(candidate));
      if (!partition) throw unable(`ledger ${position.ledgerId} is not a ledger of this topic`);
      if (
        request.partitionIndex !== undefined &&
        request.partitionIndex >= 0 &&
        request.partitionIndex !== partition.partitionIndex
      ) {
        throw unable(
          `ledger ${position.ledgerId} belongs to partition ${partition.partitionIndex}, not ${request.partitionIndex}`,
        );
      }
      const ledger = (await ports.ledger.state(partition))?.ledgers.find(
        (candidate) => candidate.ledgerId === position.ledgerId,
      );
      if (!ledger || position.entryId > ledger.entries) {
        throw unable(`ledger ${position.ledgerId} holds ${ledger?.entries ?? 0n} entries`);
      }
      return [partition];
    },
    move: (target, dryRun) =>
      resetTo(
        ports,
        target,
        request.isExcluded ? Position.of(position.ledgerId, position.entryId + 1n) : position,
        dryRun,
      ),
  });
}

/**
 * Pulsar's `resetcursor` with MessageId.earliest (`-1:-1`) or MessageId.latest (`Long.MAX_VALUE`
 * twice): every partition's subscription starts over at the first entry retention kept, or at the
 * end of the log (everything published so far counts as consumed). A `partitionIndex` (>= 0) resets
 * that partition only, as a message id of one partition does; 412 when the topic has no such
 * partition.
 */
export function resetCursorToEdge(
  ports: UseCasePorts,
  request: CursorOperationRequest & {
    readonly subscriptionName: string;
    readonly edge: 'earliest' | 'latest';
    /** -1 or absent: every partition. */
    readonly partitionIndex?: number;
  },
): Promise<CursorOperationOutcome> {
  const index = request.partitionIndex ?? -1;
  return runCursorOperation(ports, request, {
    operation: 'resetCursor',
    target: index >= 0 ? `${request.edge} (partition ${index})` : request.edge,
    ...(index >= 0
      ? {
          partitions: async (resolved) => {
            const partition = resolved.partitions.find((candidate) => candidate.partitionIndex === index);
            if (!partition) {
              throw new PreconditionFailedError(
                `Unable to find position ${request.edge} on ${request.topic}: it has no partition ${index}`,
              );
            }
            return [partition];
          },
        }
      : {}),
    move: async (target, dryRun) => {
      const state = await ports.ledger.state(target.partition);
      if (!state) throw new PreconditionFailedError(`${target.partition.toString()} has no ledger yet`);
      const first = state.ledgers[0];
      const position =
        request.edge === 'latest' || !first ? endOfLog(state) : Position.of(first.ledgerId, 0n);
      return resetTo(ports, target, position, dryRun);
    },
  });
}

async function resetTo(
  ports: UseCasePorts,
  target: CursorTarget,
  requested: Position,
  dryRun: boolean,
): Promise<CursorMove> {
  const ctx = engineOf(ports);
  const cursor = cursorOf(target.partition, target);
  // What retention deleted is no message any more: a reset before the first kept entry starts at it
  // (as Pulsar moves a reset into a deleted ledger to the first valid position). Readers may still
  // hold deleted payloads in a cache; they are never handed out again.
  const firstKept = (await ports.ledger.state(target.partition))?.firstKept;
  const readPosition = firstKept && requested.compareTo(firstKept) < 0 ? firstKept : requested;
  if (dryRun) return resetCursor(ctx, cursor, readPosition, { dryRun });
  // Under the cursor's lease: a skip (which reads the backlog, then acknowledges) never interleaves.
  let move = await withCursorLease(ports, target.subscription.cursorId, () =>
    resetCursor(ctx, cursor, readPosition),
  );
  // A retention run that read the mark-deletes before this reset moved the cursor may have
  // deleted past the first kept position read above: start at what it kept (retention, which
  // checks the cursors again after it trimmed, covers the other order).
  for (let round = 0; round < 3; round++) {
    const kept = (await ports.ledger.state(target.partition))?.firstKept;
    if (!kept || move.newReadPosition.compareTo(kept) >= 0) break;
    const again = await withCursorLease(ports, target.subscription.cursorId, () =>
      resetCursor(ctx, cursor, kept),
    );
    move = {
      ...move,
      newMarkDeletePosition: again.newMarkDeletePosition,
      newReadPosition: again.newReadPosition,
    };
  }
  // Receivers that found the subscription caught up read its cursor again (Pulsar disconnects
  // them, and they read from the new read position when they reconnect).
  ports.hints.caughtUp.forget(cursor.cursorId);
  await ringAt(ports, cursor.cursorId, ports.clock.nowMs());
  return move;
}

function cursorOf(partition: TopicName, target: CursorTarget) {
  return { partition, cursorId: target.subscription.cursorId, type: target.subscription.type };
}
