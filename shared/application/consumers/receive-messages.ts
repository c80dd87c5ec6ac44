import type { DeliveryHandleSigner } from '../../domain/delivery-handle.ts';
import { DeadLetterRefusedError, NotFoundError } from '../../domain/errors.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import type { ByteBudget } from '../engine/byte-budget.ts';
import { dispatch } from '../engine/dispatcher.ts';
import type { Delivery } from '../engine/engine-context.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
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
import { deliveryHandlesOf } from './delivery-handles.ts';
import { doorbellOf, ringAll, ringAt } from './doorbells.ts';

export type { ConsumerMessage } from './consumer-message.ts';

/** A message handed to an HTTP consumer, with the handle that acknowledges or nacks it. */
export interface DeliveredMessage extends ConsumerMessage {
  readonly deliveryHandle: string;
}

/**
 * What one receive's answer may carry: the bytes its messages may take in all, and what one
 * message takes as the answer encodes it (the HTTP layer knows the encoding: JSON escaping, the
 * proxy result's body string, separators).
 */
export interface MessageBudget {
  readonly bytes: number;
  readonly sizeOf: (message: DeliveredMessage) => number;
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
    ...(entry.binary ? { payloadEncoding: 'base64' as const } : {}),
    ...(entry.producerName === undefined ? {} : { producerName: entry.producerName }),
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

/**
 * A dispatch on each partition, telling also which were caught up, blocked, standby or contended.
 * With a budget, each partition's dispatch gets what the answer can still carry, and a dispatch
 * that stopped at a message over it ends the round (the next receive takes it first).
 */
async function dispatchEach(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  max: number,
  answer?: AnswerSizing,
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
  const costs = answer ? answerCosts(answer) : undefined;
  let bytesLeft = answer?.budget.bytes ?? Number.POSITIVE_INFINITY;
  let full = false;
  // A random first partition, so a consumer's receives share its partitions out (seeded in tests).
  const start = Math.floor((ports.random ?? Math.random)() * consumer.partitions.length);
  for (let i = 0; i < consumer.partitions.length && taken.length < max && !full; i++) {
    const partition = consumer.partitions[(start + i) % consumer.partitions.length] as ConsumerPartition;
    const costOf = costs?.(partition);
    let result: Awaited<ReturnType<typeof dispatch>>;
    try {
      result = await dispatch(ctx, {
        cursor: cursorOf(consumer, partition),
        consumer: dispatchConsumerOf(ports, consumer, partition),
        max: max - taken.length,
        ...(consumer.subscriptionType === 'Key_Shared'
          ? { members: await keySharedMembers(ports, consumer, partition) }
          : {}),
        ...(costOf ? { budget: { bytes: bytesLeft, costOf } } : {}),
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
    full = result.full;
    for (const delivery of result.deliveries) {
      taken.push({ partition, delivery });
      if (costOf) bytesLeft -= costOf(delivery);
    }
    await ringAll(ports, partition.cursorId, result.timers);
    await scheduleDeadLetterTimers(ports, consumer, partition, result.deadLetterTimers);
  }
  ports.counters?.add('delivered', taken.length);
  const redelivered = taken.filter(({ delivery }) => delivery.redeliveryCount > 0).length;
  if (redelivered > 0) ports.counters?.add('redelivered', redelivered);
  return { taken, caughtUp, blocked, standby, contended };
}

/** What sizes an answer: its byte budget, and the signer of the handles each message carries. */
interface AnswerSizing {
  readonly budget: MessageBudget;
  readonly handles: DeliveryHandleSigner;
}

/**
 * What each delivery of a partition takes of the answer (its message, handle included, as the
 * budget sizes it), remembered for the receive: the dispatcher asks for it more than once, and a
 * payload's size is worth measuring once. Not persisted.
 */
function answerCosts(answer: AnswerSizing): (partition: ConsumerPartition) => ByteBudget['costOf'] {
  const known = new Map<string, number>();
  return (partition) => (delivery) => {
    const key = `${partition.cursorId}/${delivery.position.toString()}/${delivery.redeliveryCount}`;
    let bytes = known.get(key);
    if (bytes === undefined) {
      bytes = answer.budget.sizeOf(delivered(answer.handles, partition, delivery));
      known.set(key, bytes);
    }
    return bytes;
  };
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

/**
 * What one round of a receive may take at most, kept back from its deadline: reading the consumer
 * and renewing its lease, the dispatcher's reads and its claim, the rings it sets (about seven
 * storage calls of a few ms each) and the SDK's backoffs of two of them throttled through every
 * retry (1.4 s each with the API functions' bounded retries). No wait lasts, and no round starts,
 * past the deadline less this; so a round that claims has this long to return its answer.
 */
export const ROUND_RESERVE_MS = 4_000;

/** How much one receive call takes, and how long it waits for the first message. */
export interface ReceiveOptions {
  /** At most this many messages. */
  readonly maxMessages: number;
  /** How long to wait for the first message when none is there (a long poll); default 0. */
  readonly waitMs?: number;
  /**
   * Epoch ms (of `ports.clock`) by which the call must have returned: the HTTP answer's deadline,
   * 25 s after the request's start whatever a cold start took. The wait ends, and no round starts,
   * ROUND_RESERVE_MS before it; the call then answers what it has. Default: none (`waitMs` alone).
   */
  readonly deadlineMs?: number;
  /**
   * What the answer can carry: messages are claimed only while the next one fits, so nothing is
   * held that the answer cannot deliver (a Lambda answer carries at most 6 MB). Default: no limit.
   */
  readonly answer?: MessageBudget;
}

/**
 * The shortest doorbell wait that can show that nothing rang: SQS's shortest long poll. Under it,
 * SQS answers from a sample of its servers and may return nothing while a ring is there.
 */
const MIN_LONG_POLL_MS = 1_000;

/** What one round's dispatch found; all empty for a round that trusted the caught-up mark. */
type RoundOutcome = Awaited<ReturnType<typeof dispatchEach>>;

const NOTHING_READ: RoundOutcome = {
  taken: [],
  caughtUp: new Set(),
  blocked: new Set(),
  standby: new Set(),
  contended: new Set(),
};

/**
 * Whether a receive may trust the caught-up mark of `cursorId` instead of reading the cursor: only
 * when both the call's wait and the mark's life leave room for a long poll of at least
 * MIN_LONG_POLL_MS, which is then the look (a ring there ends it at once). A short poll never
 * decides that nothing is waiting; a shorter wait reads the cursor.
 */
function trustsCaughtUpMark(ports: UseCasePorts, cursorId: string, deadlineMs: number): boolean {
  const roomMs = Math.min(deadlineMs - ports.clock.nowMs(), ports.hints.caughtUp.remainingMs(cursorId));
  return roomMs >= MIN_LONG_POLL_MS;
}

/**
 * Receive up to `maxMessages` messages, waiting up to `waitMs` for the first (Pulsar's receive
 * over HTTP).
 * 1. The consumer's lease is renewed (every call renews it, and a call that waits renews it after
 *    each wait, which lasts at most longestWaitMs: a consumer that keeps calling is never gone).
 * 2. The dispatcher hands out due redeliveries, a replay, then first deliveries, each recorded as
 *    held by this consumer before it is returned (nothing handed out is lost if this call dies),
 *    up to `maxMessages` and only while the next message fits the answer's byte budget, each with
 *    a delivery handle signed with the deployment's handle key (loaded before the first claim).
 *    A process that saw the subscription caught up (its caught-up mark, `ports.hints.caughtUp`) and has a second or more to
 *    wait within the mark's life long-polls the doorbell first instead (trustsCaughtUpMark).
 * 3. Nothing to give: wait on the subscription's doorbell (rung by publishes and timers), at most
 *    the remaining wait (at most CONTENDED_RECHECK_MS when another consumer had just claimed what
 *    was at the read position), then read the consumer again (a close meanwhile refuses the claim:
 *    an abandoned poll takes nothing after the close) and go again. A consumer at its cap of
 *    unacknowledged entries (Pulsar's maxUnackedMessagesPerConsumer), or a Failover standby, waits
 *    a second instead and looks again, leaving the rings to the others. A wake whose dispatch found
 *    the subscription caught up drains the rings left (stale: each would end a long poll at once)
 *    and, when it took any, dispatches again (one may be a publish's after the dispatch read).
 * 4. Out of time (ROUND_RESERVE_MS before `deadlineMs`): answer nothing, handing a ring the call
 *    took and did not use to whoever polls next.
 */
export async function receiveMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  { maxMessages, waitMs = 0, answer, deadlineMs = Number.POSITIVE_INFINITY }: ReceiveOptions,
): Promise<DeliveredMessage[]> {
  let consumer = await requireConsumer(ports, principal, consumerId);
  await renewLease(ports, consumer);
  // Before anything is claimed: a claim whose handles cannot be signed would leave its entries held.
  const handles = await deliveryHandlesOf(ports);
  const sizing = answer ? { budget: answer, handles } : undefined;
  const lastRoundMs = deadlineMs - ROUND_RESERVE_MS;
  const deadline = Math.min(ports.clock.nowMs() + waitMs, lastRoundMs);
  /** The partition whose ring this call took last (a wait, a drain), until a dispatch used it. */
  let tookRing: string | undefined;
  const outOfTime = async (): Promise<boolean> => {
    if (ports.clock.nowMs() < lastRoundMs) return false;
    if (tookRing !== undefined) await ringAt(ports, tookRing, ports.clock.nowMs());
    return true;
  };
  for (let round = 0; ; round++) {
    if (round === 0 && (await outOfTime())) return [];
    const single =
      consumer.partitions.length === 1 ? (consumer.partitions[0] as ConsumerPartition) : undefined;
    const rung = !(
      round === 0 &&
      single !== undefined &&
      trustsCaughtUpMark(ports, single.cursorId, deadline)
    );
    const outcome = rung ? await dispatchEach(ports, consumer, maxMessages, sizing) : NOTHING_READ;
    const { taken, caughtUp, blocked, standby } = outcome;
    // Partitions where nothing is this consumer's to take (at its cap, or a Failover standby):
    // their doorbell's rings are for the subscription's other consumers. A ring this call took
    // before it knew (a wait that trusted the caught-up mark) is passed on.
    const idle = new Set([...blocked, ...standby]);
    const woke = rung ? tookRing : undefined;
    if (woke !== undefined) {
      if (idle.has(woke)) await ringAt(ports, woke, ports.clock.nowMs());
      tookRing = undefined;
    }
    if (single && rung) {
      if (caughtUp.has(single.cursorId)) ports.hints.caughtUp.mark(single.cursorId);
      else ports.hints.caughtUp.forget(single.cursorId);
    }
    if (taken.length > 0)
      return taken.map(({ partition, delivery }) => delivered(handles, partition, delivery));
    const remaining = deadline - ports.clock.nowMs();
    if (woke !== undefined && caughtUp.has(woke) && (await drainStaleRings(ports, woke)) > 0) {
      // A drained ring may be a publish's sent after this dispatch read: look again, not wait.
      if (remaining <= 0) return [];
      tookRing = woke;
      continue;
    }
    if (remaining <= 0) return [];
    if (idle.size > 0 && idle.size === consumer.partitions.length) {
      // At its cap of unacknowledged entries (Pulsar's blocked consumer) or a standby on every
      // partition: look again in a moment, leaving the doorbell's rings to the other consumers
      // (a standby that took them kept the active consumer's long poll waiting).
      if (!ports.sleep) return [];
      await ports.sleep(Math.min(remaining, IDLE_RECHECK_MS));
    } else {
      tookRing = await waitOnDoorbell(ports, { consumer, round, rung, remaining, outcome });
    }
    if (await outOfTime()) return [];
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

/**
 * The rings left on a doorbell whose wake found the subscription caught up: stale, taken so that
 * the next long poll waits. The caught-up mark is forgotten when any were there (one may be a
 * publish's sent after the dispatch read), so the next look reads the cursor.
 * @returns how many rings were drained.
 */
async function drainStaleRings(ports: UseCasePorts, cursorId: string): Promise<number> {
  const drained = await ports.deliveryQueue.drainRings(doorbellOf(cursorId));
  if (drained > 0) ports.hints.caughtUp.forget(cursorId);
  return drained;
}

/**
 * One wait on the doorbell of an open partition (never one where this consumer is idle: that
 * ring is for the others), in turn across the consumer's partitions. A round that trusted the
 * caught-up mark instead of reading the cursor waits no longer than the mark is trusted (the ring
 * it did not find may have gone to another process), and at least MIN_LONG_POLL_MS
 * (trustsCaughtUpMark).
 * @returns the partition whose ring it took, if one rang.
 */
async function waitOnDoorbell(
  ports: UseCasePorts,
  wait: {
    readonly consumer: ConsumerRecord;
    readonly round: number;
    readonly rung: boolean;
    readonly remaining: number;
    readonly outcome: RoundOutcome;
  },
): Promise<string | undefined> {
  const { consumer, round, rung, remaining, outcome } = wait;
  const idle = new Set([...outcome.blocked, ...outcome.standby]);
  const open = consumer.partitions.filter((candidate) => !idle.has(candidate.cursorId));
  const partition = open[round % open.length] as ConsumerPartition;
  const trusted = rung ? MAX_POLL_MS : ports.hints.caughtUp.remainingMs(partition.cursorId);
  const pollMs = Math.min(
    consumer.partitions.length === 1 ? MAX_POLL_MS : 1_000,
    remaining,
    trusted,
    longestWaitMs(consumer),
    // Another consumer took what was at the read position: more may wait behind it, and the
    // rings of a backlog may all be taken. A short wait, then a look at the cursor again.
    outcome.contended.size > 0 ? CONTENDED_RECHECK_MS : MAX_POLL_MS,
  );
  const woke = await ports.deliveryQueue.waitForRing(doorbellOf(partition.cursorId), pollMs);
  if (woke || consumer.partitions.length > 1) ports.hints.caughtUp.forget(partition.cursorId);
  return woke ? partition.cursorId : undefined;
}

/** The message with the signed handle that acknowledges or nacks it. */
function delivered(
  handles: DeliveryHandleSigner,
  partition: ConsumerPartition,
  delivery: Delivery,
): DeliveredMessage {
  const deliveryHandle = handles.issue({
    cursorId: partition.cursorId,
    ledgerId: delivery.position.ledgerId.toString(),
    entryId: delivery.position.entryId.toString(),
    partitionIndex: partition.partitionIndex,
    redeliveryCount: delivery.redeliveryCount,
  });
  return { ...consumerMessageOf(partition, delivery), deliveryHandle };
}
