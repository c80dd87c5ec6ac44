import { type DeliveryHandle, encodeDeliveryHandle } from '../../domain/delivery-token.ts';
import { DeadLetterRefusedError, NotFoundError } from '../../domain/errors.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import { dispatch } from '../engine/dispatcher.ts';
import type { Delivery } from '../engine/engine-context.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
import { caughtUpMarks } from '../process-memo.ts';
import { scheduleDeadLetterTimers } from '../producers/dead-letter-timers.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import type { ConsumerMessage } from './consumer-message.ts';
import {
  dispatchConsumerOf,
  keySharedMembers,
  longestWaitMs,
  renewLease,
  requireConsumer,
} from './consumer-session.ts';
import { doorbellOf, ringAll, ringAt } from './doorbells.ts';

export type { ConsumerMessage } from './consumer-message.ts';

/** A message handed to an HTTP consumer, with the handle that acknowledges or nacks it. */
export interface DeliveredMessage extends ConsumerMessage {
  readonly deliveryHandle: string;
}

/** Longest single wait on a doorbell (SQS's long poll). */
const MAX_POLL_MS = 20_000;

/** The message of one delivery, as consumers see it. */
export function consumerMessageOf(partition: ConsumerPartition, delivery: Delivery): ConsumerMessage {
  const { entry } = delivery;
  return {
    messageId: `${delivery.position.toString()}:${partition.partitionIndex}`,
    payload: entry.payload,
    key: entry.key ?? null,
    properties: entry.properties ?? {},
    redeliveryCount: delivery.redeliveryCount,
    publishTime: entry.publishTimeMs,
    eventTime: entry.eventTimeMs ?? null,
  };
}

/**
 * One dispatch for `consumer` on each of its partitions in turn, until `max` messages; rings the
 * timers the dispatch set (delayed entries, ack timeouts). Shared by HTTP receive and Lambda
 * consumers. Throws ConsumerFencedError for a replaced Exclusive/Failover owner, and
 * DeadLetterRefusedError when a due dead letter is refused before anything was handed out.
 */
/**
 * One dispatch on each of the consumer's partitions, up to `max` in all (the Lambda consumer's
 * step). A partition where another consumer won the claim is rung again when nothing came: the
 * ring this invocation came with went to that race, and the entries behind it still need one.
 */
export async function dispatchFor(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  max: number,
): Promise<{ partition: ConsumerPartition; delivery: Delivery }[]> {
  const { taken, contended } = await dispatchEach(ports, consumer, max);
  if (taken.length === 0) {
    for (const cursorId of contended) await ringAt(ports, cursorId, ports.clock.nowMs());
  }
  return taken;
}

/** A dispatch on each partition, telling also which were caught up, blocked, standby or contended. */
async function dispatchEach(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  max: number,
): Promise<{
  taken: { partition: ConsumerPartition; delivery: Delivery }[];
  caughtUp: Set<string>;
  blocked: Set<string>;
  standby: Set<string>;
  contended: Set<string>;
}> {
  const ctx = engineOf(ports);
  const taken: { partition: ConsumerPartition; delivery: Delivery }[] = [];
  const caughtUp = new Set<string>();
  const blocked = new Set<string>();
  const standby = new Set<string>();
  const contended = new Set<string>();
  const start = Math.floor(Math.random() * consumer.partitions.length);
  for (let i = 0; i < consumer.partitions.length && taken.length < max; i++) {
    const partition = consumer.partitions[(start + i) % consumer.partitions.length] as ConsumerPartition;
    let result: Awaited<ReturnType<typeof dispatch>>;
    try {
      result = await dispatch(ctx, {
        cursor: cursorOf(consumer, partition),
        consumer: dispatchConsumerOf(ports, consumer, partition),
        max: max - taken.length,
        ...(consumer.subscriptionType === 'Key_Shared'
          ? { members: await keySharedMembers(ports, consumer, partition) }
          : {}),
      });
    } catch (error) {
      // What earlier partitions handed out is held by this consumer: return it. The refused dead
      // letter stays due; a ring now wakes the next receive, which answers the refusal.
      if (error instanceof DeadLetterRefusedError && taken.length > 0) {
        await ringAt(ports, partition.cursorId, ports.clock.nowMs());
        break;
      }
      throw error;
    }
    if (result.kind === 'blocked') blocked.add(partition.cursorId);
    if (result.kind === 'standby') standby.add(partition.cursorId);
    if (result.kind !== 'delivered') continue;
    if (result.caughtUp) caughtUp.add(partition.cursorId);
    if (result.contended) contended.add(partition.cursorId);
    for (const delivery of result.deliveries) taken.push({ partition, delivery });
    await ringAll(ports, partition.cursorId, result.timers);
    await scheduleDeadLetterTimers(ports, consumer, partition, result.deadLetterTimers);
  }
  ports.counters?.add('delivered', taken.length);
  const redelivered = taken.filter(({ delivery }) => delivery.redeliveryCount > 0).length;
  if (redelivered > 0) ports.counters?.add('redelivered', redelivered);
  return { taken, caughtUp, blocked, standby, contended };
}

/**
 * How long a receive whose consumer is at its cap (see consumerRoom), or a Failover standby, waits
 * before it looks again.
 */
const IDLE_RECHECK_MS = 1_000;

/**
 * The longest doorbell wait after a receive lost the claim at the read position to another
 * consumer (see giveUpAfterLostClaim): a ring usually ends it sooner.
 */
const CONTENDED_RECHECK_MS = 100;

/** How much one receive call takes, and how long it waits for the first message. */
export interface ReceiveOptions {
  /** At most this many messages. */
  readonly maxMessages: number;
  /** How long to wait for the first message when none is there (a long poll); default 0. */
  readonly waitMs?: number;
}

/**
 * Receive up to `maxMessages` messages, waiting up to `waitMs` for the first (Pulsar's receive
 * over HTTP).
 * 1. The consumer's lease is renewed (every call renews it, and a call that waits renews it after
 *    each wait, which lasts at most longestWaitMs: a consumer that keeps calling is never gone).
 * 2. The dispatcher hands out due redeliveries, a replay, then first deliveries, each recorded as
 *    held by this consumer before it is returned (nothing handed out is lost if this call dies).
 * 3. Nothing to give: wait on the subscription's doorbell (rung by publishes and timers), at most
 *    the remaining wait (at most CONTENDED_RECHECK_MS when another consumer had just claimed what
 *    was at the read position), then read the consumer again (a close meanwhile refuses the claim:
 *    an abandoned poll takes nothing after the close) and go again. A consumer at its cap of
 *    unacknowledged entries (Pulsar's maxUnackedMessagesPerConsumer), or a Failover standby, waits
 *    a second instead and looks again, leaving the rings to the others.
 */
export async function receiveMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  { maxMessages, waitMs = 0 }: ReceiveOptions,
): Promise<DeliveredMessage[]> {
  let consumer = await requireConsumer(ports, principal, consumerId);
  await renewLease(ports, consumer);
  const deadline = ports.clock.nowMs() + waitMs;
  /** The partition whose ring this call took last (a short poll, a wait), until a dispatch used it. */
  let tookRing: string | undefined;
  for (let round = 0; ; round++) {
    const single =
      consumer.partitions.length === 1 ? (consumer.partitions[0] as ConsumerPartition) : undefined;
    // Caught up at the last look and no ring since: nothing to read the cursor for (an SQS short
    // poll instead of a head and an entries read).
    const shortPolled = round === 0 && single !== undefined && caughtUpMarks.has(ports, single.cursorId);
    const rung = shortPolled ? await ports.deliveryQueue.waitForRing(doorbellOf(single.cursorId), 0) : true;
    if (shortPolled && rung) tookRing = single.cursorId;
    const { taken, caughtUp, blocked, standby, contended } = rung
      ? await dispatchEach(ports, consumer, maxMessages)
      : {
          taken: [],
          caughtUp: new Set<string>(),
          blocked: new Set<string>(),
          standby: new Set<string>(),
          contended: new Set<string>(),
        };
    // Partitions where nothing is this consumer's to take (at its cap, or a Failover standby):
    // their doorbell's rings are for the subscription's other consumers. A ring this call took
    // before it knew (a short poll, a wait that trusted the caught-up mark) is passed on.
    const idle = new Set([...blocked, ...standby]);
    if (rung && tookRing !== undefined) {
      if (idle.has(tookRing)) await ringAt(ports, tookRing, ports.clock.nowMs());
      tookRing = undefined;
    }
    if (single && rung) {
      if (caughtUp.has(single.cursorId)) caughtUpMarks.mark(ports, single.cursorId);
      else caughtUpMarks.forget(ports, single.cursorId);
    }
    if (taken.length > 0) return taken.map(({ partition, delivery }) => delivered(partition, delivery));
    const remaining = deadline - ports.clock.nowMs();
    if (remaining <= 0) return [];
    if (idle.size > 0 && idle.size === consumer.partitions.length) {
      // At its cap of unacknowledged entries (Pulsar's blocked consumer) or a standby on every
      // partition: look again in a moment, leaving the doorbell's rings to the other consumers
      // (a standby that took them kept the active consumer's long poll waiting).
      if (!ports.sleep) return [];
      await ports.sleep(Math.min(remaining, IDLE_RECHECK_MS));
    } else {
      // Never on the doorbell of an idle partition: that ring is for the others.
      const open = consumer.partitions.filter((candidate) => !idle.has(candidate.cursorId));
      const partition = open[round % open.length] as ConsumerPartition;
      // A round that trusted the mark instead of reading the cursor waits no longer than the mark
      // is trusted: the ring it did not find may have gone to another process.
      const trusted = rung ? MAX_POLL_MS : caughtUpMarks.remainingMs(ports, partition.cursorId);
      const pollMs = Math.min(
        consumer.partitions.length === 1 ? MAX_POLL_MS : 1_000,
        remaining,
        trusted,
        longestWaitMs(consumer),
        // Another consumer took what was at the read position: more may wait behind it, and the
        // rings of a backlog may all be taken. A short wait, then a look at the cursor again.
        contended.size > 0 ? CONTENDED_RECHECK_MS : MAX_POLL_MS,
      );
      const woke = await ports.deliveryQueue.waitForRing(doorbellOf(partition.cursorId), pollMs);
      if (woke) tookRing = partition.cursorId;
      if (woke || consumer.partitions.length > 1) caughtUpMarks.forget(ports, partition.cursorId);
    }
    // After any wait, the consumer is read again before anything is claimed: a close while this
    // call waited (an abandoned poll) refuses the claim. One consumer read per wait.
    try {
      consumer = await requireConsumer(ports, principal, consumerId, { fresh: true });
    } catch (error) {
      if (error instanceof NotFoundError) return []; // closed while this call waited
      throw error;
    }
    await renewLease(ports, consumer);
  }
}

function delivered(partition: ConsumerPartition, delivery: Delivery): DeliveredMessage {
  const handle: DeliveryHandle = {
    cursorId: partition.cursorId,
    receipt: '-',
    ledgerId: delivery.position.ledgerId.toString(),
    entryId: delivery.position.entryId.toString(),
    partitionIndex: partition.partitionIndex,
    redeliveryCount: delivery.redeliveryCount,
  };
  return { ...consumerMessageOf(partition, delivery), deliveryHandle: encodeDeliveryHandle(handle) };
}
