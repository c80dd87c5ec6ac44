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
 * Rings once per distinct second among `dues` (the timers a step set); dues already reached ring
 * once, with no delay (rounding them up to the next second would wake the receiver up to a second
 * late).
 */
export async function ringAll(ports: UseCasePorts, cursorId: string, dues: readonly number[]): Promise<void> {
  const now = ports.clock.nowMs();
  const times = new Set(dues.map((due) => (due <= now ? now : Math.ceil(due / 1000) * 1000)));
  await Promise.all([...times].map((time) => ringAt(ports, cursorId, time)));
}
