import { NotFoundError } from '../../shared/domain/errors.ts';
import type { DeliveryQueue, SubscriptionQueue } from '../../shared/ports/delivery-queue.ts';
import { InjectedFaults } from './in-memory-faults.ts';

/**
 * Subscription doorbell queues in memory: queues exist or not, rings are kept until a receiver
 * takes them, and a test sets how many messages a queue's dead-letter queue holds (SQS moves them
 * there; nothing here does). Waiting takes what rang and returns at once: tests drive time
 * themselves. Not persisted.
 */
export class InMemoryDeliveryQueue implements DeliveryQueue {
  readonly maxDelaySeconds = 900;
  /** cursorId -> the delays of the rings sent and not taken yet, for the queues that exist. */
  readonly rings = new Map<string, number[]>();
  private readonly deadLetters = new Map<string, number>();
  private readonly faults = new InjectedFaults<keyof DeliveryQueue>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof DeliveryQueue, error: Error): void {
    this.faults.failNext(operation, error);
  }

  /** Makes the dead-letter queue of `cursorId`'s queue hold `count` messages. */
  setDeadLetterCount(cursorId: string, count: number): void {
    this.deadLetters.set(cursorId, count);
  }

  async create(queue: SubscriptionQueue): Promise<void> {
    await this.faults.enter('create');
    if (!this.rings.has(queue.cursorId)) this.rings.set(queue.cursorId, []);
  }

  async delete(queue: SubscriptionQueue): Promise<void> {
    await this.faults.enter('delete');
    this.rings.delete(queue.cursorId);
    this.deadLetters.delete(queue.cursorId);
  }

  async ring(queue: SubscriptionQueue, delaySeconds: number): Promise<void> {
    await this.faults.enter('ring');
    const rings = this.rings.get(queue.cursorId);
    if (!rings) throw new NotFoundError(`Queue of cursor ${queue.cursorId} not found`);
    rings.push(delaySeconds);
  }

  async waitForRing(queue: SubscriptionQueue): Promise<boolean> {
    await this.faults.enter('waitForRing');
    const rings = this.rings.get(queue.cursorId);
    if (!rings) throw new NotFoundError(`Queue of cursor ${queue.cursorId} not found`);
    return rings.splice(0).length > 0;
  }

  async drainRings(queue: SubscriptionQueue): Promise<number> {
    await this.faults.enter('drainRings');
    const rings = this.rings.get(queue.cursorId);
    if (!rings) throw new NotFoundError(`Queue of cursor ${queue.cursorId} not found`);
    return rings.splice(0).length;
  }

  async deadLetterCount(queue: SubscriptionQueue): Promise<number> {
    await this.faults.enter('deadLetterCount');
    return this.rings.has(queue.cursorId) ? (this.deadLetters.get(queue.cursorId) ?? 0) : 0;
  }
}
