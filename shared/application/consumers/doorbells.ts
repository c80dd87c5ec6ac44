import { NotFoundError } from '../../domain/errors.ts';
import type { SubscriptionQueue } from '../../ports/delivery-queue.ts';
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

/**
 * Rings once per distinct delay among `dues` (the timers a step set): a due time already reached
 * rings with no delay, a later one after the whole seconds that reach it from now (so at most a
 * second late, never early; dues within the same second from now share a ring).
 */
export async function ringAll(ports: UseCasePorts, cursorId: string, dues: readonly number[]): Promise<void> {
  const now = ports.clock.nowMs();
  const delays = new Set(dues.map((due) => Math.max(0, Math.ceil((due - now) / 1000))));
  await Promise.all([...delays].map((delaySeconds) => ringAt(ports, cursorId, now + delaySeconds * 1000)));
}
