import { NotFoundError } from '../../shared/domain/errors.ts';
import type {
  DeliveryQueue,
  ReceivedToken,
  SubscriptionQueue,
  TokenToSend,
} from '../../shared/ports/delivery-queue.ts';
import { InjectedFaults } from './in-memory-faults.ts';

/**
 * Subscription queues in memory, for use cases that manage queues rather than
 * deliver through them: queues exist or not, tokens sent are kept in order,
 * and a test sets how many tokens a queue's dead-letter queue holds (SQS moves
 * them there; nothing here does). Receiving returns nothing: delivery is
 * tested against the embedded stack's SQS, so a queue's depth is every token
 * sent to it (a test takes tokens off `sent` to stand for consumers). Not
 * persisted.
 */
export class InMemoryDeliveryQueue implements DeliveryQueue {
  readonly maxDelaySeconds = 900;
  /** cursorId -> tokens sent, for the queues that exist. */
  readonly sent = new Map<string, TokenToSend[]>();
  private readonly deadLetters = new Map<string, number>();
  private readonly faults = new InjectedFaults<keyof DeliveryQueue>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof DeliveryQueue, error: Error): void {
    this.faults.failNext(operation, error);
  }

  /** Makes the dead-letter queue of `cursorId`'s queue hold `count` tokens. */
  setDeadLetterCount(cursorId: string, count: number): void {
    this.deadLetters.set(cursorId, count);
  }

  /** cursorId -> the delays of the rings sent (a waiting receiver takes them all). */
  readonly rings = new Map<string, number[]>();

  async ring(queue: SubscriptionQueue, delaySeconds: number): Promise<void> {
    await this.faults.enter('ring');
    if (!this.sent.has(queue.cursorId))
      throw new NotFoundError(`Queue of cursor ${queue.cursorId} not found`);
    this.rings.set(queue.cursorId, [...(this.rings.get(queue.cursorId) ?? []), delaySeconds]);
  }

  /** Takes the rings sent so far; waits for nothing (tests drive time themselves). */
  async waitForRing(queue: SubscriptionQueue): Promise<boolean> {
    await this.faults.enter('waitForRing');
    const rings = this.rings.get(queue.cursorId) ?? [];
    this.rings.delete(queue.cursorId);
    return rings.length > 0;
  }

  async create(queue: SubscriptionQueue): Promise<void> {
    await this.faults.enter('create');
    if (!this.sent.has(queue.cursorId)) this.sent.set(queue.cursorId, []);
  }

  async delete(queue: SubscriptionQueue): Promise<void> {
    await this.faults.enter('delete');
    this.sent.delete(queue.cursorId);
    this.deadLetters.delete(queue.cursorId);
  }

  async send(queue: SubscriptionQueue, tokens: readonly TokenToSend[]): Promise<void> {
    await this.faults.enter('send');
    this.sent.get(queue.cursorId)?.push(...tokens);
  }

  async receive(): Promise<ReceivedToken[]> {
    await this.faults.enter('receive');
    return [];
  }

  async remove(): Promise<void> {
    await this.faults.enter('remove');
  }

  async release(): Promise<void> {
    await this.faults.enter('release');
  }

  /** Every token sent: nothing receives them here. */
  async depth(queue: SubscriptionQueue): Promise<number> {
    await this.faults.enter('depth');
    const tokens = this.sent.get(queue.cursorId);
    if (!tokens) throw new NotFoundError(`The subscription queue ${queue.cursorId} does not exist`);
    return tokens.length;
  }

  async deadLetterCount(queue: SubscriptionQueue): Promise<number> {
    await this.faults.enter('deadLetterCount');
    return this.sent.has(queue.cursorId) ? (this.deadLetters.get(queue.cursorId) ?? 0) : 0;
  }
}
