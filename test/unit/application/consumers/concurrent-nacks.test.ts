// A nack's release contends on the head with every claim and with the consumer's other nacks (a
// client that nacks a batch sends them at once, often while its next receive waits). Each nack that
// answered 204 brings its message back after the backoff (issue 21: every nack followed by a
// redelivery; nothing unacknowledged lost), and one that cannot get through says so (503).
import { describe, expect, it } from 'vitest';
import { negativeAcknowledge } from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { DEFAULT_ENGINE_LIMITS } from '../../../../shared/application/engine/engine-context.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import type { DispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { ServiceUnavailableError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { CasOutcome, HeadRecord } from '../../../../shared/ports/dispatch-store.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const orders = TopicName.parse('persistent://public/default/orders');
const NACK_DELAY_MS = 1_000;

/** A store where, while `busy`, every head write loses its race to another writer. */
class BusyHeadStore extends InMemoryDispatchStore {
  busy = false;
  lostRaces = 0;

  override async casHead(
    cursorId: string,
    version: number,
    head: DispatchHead,
  ): Promise<CasOutcome<HeadRecord>> {
    if (!this.busy) return super.casHead(cursorId, version, head);
    this.lostRaces++;
    return { ok: false, current: (await this.readHead(cursorId)) as HeadRecord };
  }
}

async function world(
  subscriptionType: 'Shared' | 'Exclusive',
  parts: { dispatch?: InMemoryDispatchStore; pauseAfterConflict?: (attempt: number) => Promise<void> } = {},
) {
  const clock = new ManualClock(1_700_000_000_000);
  const { ports } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    ...parts,
  });
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic: orders,
    subscription: 'sub',
    subscriptionType,
    initialPosition: 'Earliest',
    consumerName: 'c',
    policy: { negativeAckRedeliveryDelayMs: NACK_DELAY_MS },
  });
  return { clock, ports, consumerId };
}

/** Publishes `count` messages and receives them one by one (one run each). */
async function held(ports: UseCasePorts, consumerId: string, count: number) {
  await publishMessages(ports, admin, orders, {
    messages: Array.from({ length: count }, (_, i) => ({ payload: `m-${i}`, properties: {} })),
    router: new RoundRobinRouter(0),
  });
  const messages = [];
  while (messages.length < count) {
    messages.push(...(await receiveMessages(ports, admin, consumerId, { maxMessages: 1 })));
  }
  return messages;
}

function nack(ports: UseCasePorts, consumerId: string, deliveryHandle: string) {
  return negativeAcknowledge(ports, admin, consumerId, { messageIds: [], deliveryHandles: [deliveryHandle] });
}

describe('negative acknowledgements sent at once', () => {
  for (const subscriptionType of ['Shared', 'Exclusive'] as const) {
    it(`${subscriptionType}: 8 nacks in flight together each bring their message back after the backoff`, async () => {
      const { clock, ports, consumerId } = await world(subscriptionType);
      const messages = await held(ports, consumerId, 8);
      // Before the fix, each nack tried casAttempts (5) times: the last 3 of 8 lost every race and
      // answered success having released nothing (those messages stayed held, never redelivered).
      await Promise.all(messages.map((message) => nack(ports, consumerId, message.deliveryHandle)));
      expect(await receiveMessages(ports, admin, consumerId, { maxMessages: 10 })).toEqual([]);
      clock.advance(NACK_DELAY_MS);
      const back = [];
      for (let round = 0; round < 10 && back.length < messages.length; round++) {
        back.push(...(await receiveMessages(ports, admin, consumerId, { maxMessages: 10 })));
      }
      expect(back.map((message) => message.messageId).sort()).toEqual(
        messages.map((message) => message.messageId).sort(),
      );
      expect(back.every((message) => message.redeliveryCount === 1)).toBe(true);
    });
  }

  it('answers 503 (not success) when every attempt lost its race, pausing after each; sent again, it gets through', async () => {
    const dispatch = new BusyHeadStore();
    const pauses: number[] = [];
    const { clock, ports, consumerId } = await world('Shared', {
      dispatch,
      pauseAfterConflict: async (attempt) => {
        pauses.push(attempt);
      },
    });
    const [message] = await held(ports, consumerId, 1);
    dispatch.busy = true;
    await expect(nack(ports, consumerId, message?.deliveryHandle as string)).rejects.toThrow(
      ServiceUnavailableError,
    );
    const attempts = DEFAULT_ENGINE_LIMITS.casAttempts * 8;
    expect(dispatch.lostRaces).toBe(attempts);
    expect(pauses).toEqual(Array.from({ length: attempts - 1 }, (_, i) => i));

    dispatch.busy = false;
    await nack(ports, consumerId, message?.deliveryHandle as string);
    clock.advance(NACK_DELAY_MS);
    const [back] = await receiveMessages(ports, admin, consumerId, { maxMessages: 1 });
    expect(back?.messageId).toBe(message?.messageId);
    expect(back?.redeliveryCount).toBe(1);
  });
});
