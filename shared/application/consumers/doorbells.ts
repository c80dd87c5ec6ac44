import { NotFoundError } from '../../domain/errors.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { SubscriptionQueue } from '../../ports/delivery-queue.ts';
import { markSubscriptionActive } from '../maintenance/activity.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/** A subscription's doorbell queue (standard SQS: rings carry nothing, order does not matter). */
export function doorbellOf(cursorId: string): SubscriptionQueue {
  return { cursorId, ordered: false };
}

/**
 * Rings the subscription's doorbell at `dueAtMs` (a timer: nack backoff, delayed delivery, an ack
 * timeout): at once, after an SQS delay, or through the scheduler past SQS's 900 s. Rounded up to
 * whole seconds, so never early. A ring only wakes receivers: the engine decides what is due.
 */
export async function ringAt(ports: UseCasePorts, cursorId: string, dueAtMs: number): Promise<void> {
  const delaySeconds = Math.max(0, Math.ceil((dueAtMs - ports.clock.nowMs()) / 1000));
  if (delaySeconds <= ports.deliveryQueue.maxDelaySeconds) {
    try {
      await ports.deliveryQueue.ring(doorbellOf(cursorId), delaySeconds);
    } catch (error) {
      // The subscription was deleted with its queue: nobody to wake.
      if (!(error instanceof NotFoundError)) throw error;
    }
    return;
  }
  await ports.scheduler.schedule([{ kind: 'ring', cursorId, dueAtMs }]);
}

/** Rings once per distinct second among `dues` (the timers a step set). */
export async function ringAll(ports: UseCasePorts, cursorId: string, dues: readonly number[]): Promise<void> {
  const seconds = new Set(dues.map((due) => Math.ceil(due / 1000)));
  await Promise.all([...seconds].map((second) => ringAt(ports, cursorId, second * 1000)));
}

/**
 * Publishing's second half: every subscription of the partition (those announced at or before
 * `subscriptionsVersion`, read with the ids; listed again only when it is new to this process)
 * gets a ring now, and one at each delayed message's deliverAt. A subscription announced later
 * finds the entries anyway: dispatch reads the ledger from its read position.
 * Cost: one SendMessage per subscription (plus one per distinct deliverAt second), and an activity
 * mark per subscription at most once a minute per process.
 */
export async function ringSubscriptions(
  ports: UseCasePorts,
  partition: TopicName,
  subscriptionsVersion: string,
  dueAtMs: readonly number[],
): Promise<void> {
  const subscriptions = await ports.catalog.subscriptionsAt(partition, subscriptionsVersion);
  await Promise.all(
    subscriptions.map((subscription) =>
      Promise.all([
        ringAll(ports, subscription.cursorId, dueAtMs).catch(() => undefined),
        // The publish is stored: a lost mark waits for the next activity, as a lost ring does.
        markSubscriptionActive(ports, partition, subscription).catch(() => undefined),
      ]),
    ),
  );
}
