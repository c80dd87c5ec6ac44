import { AcklineError } from '../../domain/errors.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { AuditRecord } from '../../ports/audit-log.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import type { CursorMove } from '../engine/reset-cursor.ts';
import { requireAction, requirePrincipal } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import {
  type ResolvedTopic,
  requirePersistent,
  requireSubscription,
  resolveTopic,
} from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/** An admin operation on subscription cursors, as the audit log names it. */
export type CursorOperationName = NonNullable<AuditRecord['operation']>;

export interface CursorOperationRequest {
  readonly topic: TopicName;
  /** Undefined: every subscription of the topic (Pulsar's `all_subscription`). */
  readonly subscriptionName?: string;
  readonly dryRun: boolean;
  readonly principal: Principal | undefined;
  readonly requestId: string;
}

/** One partition's move, as the answer of a dry run shows it. */
export interface PartitionMoveView {
  readonly partition: string;
  readonly markDeletePosition: string;
  readonly readPosition: string;
  readonly newMarkDeletePosition: string;
  readonly newReadPosition: string;
}

/** What an operation did (or, in a dry run, would do): per subscription, per partition. */
export interface CursorOperationOutcome {
  readonly operation: CursorOperationName;
  readonly target: string;
  readonly dryRun: boolean;
  readonly subscriptions: Record<string, PartitionMoveView[]>;
}

/** One subscription of one partition an operation acts on. */
export interface CursorTarget {
  readonly partition: TopicName;
  readonly subscription: SubscriptionRecord;
}

export interface CursorOperationSpec {
  readonly operation: CursorOperationName;
  /** What the operation aims at, for the audit log (`timestamp 1700000000000`, `3:15`). */
  readonly target: string;
  /** The partitions it applies to (default: every partition the call addresses). */
  readonly partitions?: (resolved: ResolvedTopic) => Promise<readonly TopicName[]>;
  /** Moves (or, with dryRun, computes the move of) one subscription's cursor on one partition. */
  readonly move: (target: CursorTarget, dryRun: boolean) => Promise<CursorMove>;
}

/**
 * The shape every admin cursor operation shares (reset-cursor, skip_all, expireMessages), audited
 * as acknowledgeMessage is:
 * 1. The topic must be persistent (405); the caller needs `consume` on the topic or namespace
 *    (403; Pulsar's RESET_CURSOR, SKIP and EXPIRE_MESSAGES topic operations).
 * 2. From here on, every outcome is recorded in the audit log (refusals too).
 * 3. Resolve the topic and the partitions (404), and every subscription named on each of them
 *    (404), before anything is written.
 * 4. Move each cursor (or, with dryRun, compute where it would go) and audit.
 */
export async function runCursorOperation(
  ports: UseCasePorts,
  request: CursorOperationRequest,
  spec: CursorOperationSpec,
): Promise<CursorOperationOutcome> {
  const caller = requirePrincipal(request.principal);
  requirePersistent(request.topic);
  await requireAction(ports.permissions, caller, request.topic, ['consume']);
  const targets: CursorTarget[] = [];
  try {
    const resolved = await resolveTopic(ports, request.topic);
    const partitions = spec.partitions ? await spec.partitions(resolved) : resolved.partitions;
    for (const partition of partitions) {
      const subscriptions =
        request.subscriptionName === undefined
          ? await ports.catalog.listSubscriptions(partition)
          : [await requireSubscription(ports, partition, request.subscriptionName)];
      targets.push(...subscriptions.map((subscription) => ({ partition, subscription })));
    }
    const outcome: CursorOperationOutcome = {
      operation: spec.operation,
      target: spec.target,
      dryRun: request.dryRun,
      subscriptions: {},
    };
    for (const target of targets) {
      const move = await spec.move(target, request.dryRun);
      const list = outcome.subscriptions[target.subscription.name] ?? [];
      list.push({
        partition: target.partition.toString(),
        markDeletePosition: move.markDeletePosition.toString(),
        readPosition: move.readPosition.toString(),
        newMarkDeletePosition: move.newMarkDeletePosition.toString(),
        newReadPosition: move.newReadPosition.toString(),
      });
      outcome.subscriptions[target.subscription.name] = list;
    }
    await audit(ports, request, { caller, spec, targets, outcome: request.dryRun ? 'dry run' : 'done' });
    return outcome;
  } catch (error) {
    if (error instanceof AcklineError) {
      await audit(ports, request, { caller, spec, targets, outcome: `refused: ${error.message}` });
    }
    throw error;
  }
}

/** What one operation did, as its audit record states it. */
interface CursorOperationAudit {
  readonly caller: Principal;
  readonly spec: CursorOperationSpec;
  /** The cursors resolved so far; none: the record names the subscription the request named, if any. */
  readonly targets: readonly CursorTarget[];
  /** `dry run`, `done` or `refused: <reason>`. */
  readonly outcome: string;
}

async function audit(
  ports: UseCasePorts,
  request: CursorOperationRequest,
  { caller, spec, targets, outcome }: CursorOperationAudit,
): Promise<void> {
  const names = [...new Set(targets.map((target) => target.subscription.name))];
  await ports.audit.record({
    operation: spec.operation,
    atMs: ports.clock.nowMs(),
    role: caller.role,
    topic: request.topic.partitionedTopicName.toString(),
    position: spec.target,
    subscriptions:
      names.length > 0 ? names : request.subscriptionName === undefined ? [] : [request.subscriptionName],
    dryRun: request.dryRun,
    outcome,
    requestId: request.requestId,
  });
}
