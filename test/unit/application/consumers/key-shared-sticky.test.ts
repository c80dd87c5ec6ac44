// Key_Shared sticky hash ranges (issue 23; Pulsar's HashRangeExclusiveStickyKeyConsumerSelector and
// KeySharedPolicyTest): ranges checked and refused as Pulsar does, keys routed by their slot
// (Murmur3_32 % 65536) to the consumer whose ranges hold it, a key no range holds waits.
import { describe, expect, it } from 'vitest';
import { subscriptionKey } from '../../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { memberForKey, routesTo } from '../../../../shared/application/engine/key-shared-routing.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import type { DispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { ValidationError } from '../../../../shared/domain/errors.ts';
import {
  firstOverlap,
  type HashRange,
  HashRangeConflictError,
  rangesHold,
  stickySlot,
  validateHashRanges,
} from '../../../../shared/domain/key-shared-sticky.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { murmur3Hash31 } from '../../../../shared/domain/murmur3.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { parseSubscribeRequest } from '../../../../shared/http/consumer-requests.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const orders = TopicName.parse('persistent://public/default/sticky-orders');

/** A key whose slot is in [start, end] (searched among `k0`, `k1`, ...). */
function keyIn(start: number, end: number, skip = 0): string {
  let found = 0;
  for (let i = 0; ; i++) {
    const slot = stickySlot(`k${i}`);
    if (slot >= start && slot <= end && found++ === skip) return `k${i}`;
  }
}

/**
 * A registry whose first `count` heartbeats (a subscribe's joining) wait for each other: the
 * subscribes racing past their first check before any of them is a member.
 */
class BarrierRegistry extends InMemoryConsumerRegistry {
  private waiting: (() => void)[] = [];

  constructor(private count: number) {
    super();
  }

  override async heartbeat(subscriptionKey: string, consumerId: string, untilMs: number): Promise<void> {
    if (this.count > 0) {
      this.count--;
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        if (this.count === 0) for (const release of this.waiting) release();
      });
    }
    return super.heartbeat(subscriptionKey, consumerId, untilMs);
  }
}

function world(consumers = new InMemoryConsumerRegistry()) {
  const clock = new ManualClock(1_700_000_000_000);
  const { ports } = inMemoryPorts({
    clock,
    consumers,
    scheduler: new InMemoryScheduler(),
  });
  return { clock, ports };
}

function subscribe(ports: UseCasePorts, hashRanges?: readonly HashRange[]) {
  return subscribeConsumer(ports, admin, {
    topic: orders,
    subscription: 'sub',
    subscriptionType: 'Key_Shared',
    initialPosition: 'Earliest',
    policy: {},
    ...(hashRanges ? { hashRanges } : {}),
  });
}

async function publish(ports: UseCasePorts, keys: readonly string[]) {
  await publishMessages(ports, admin, orders, {
    messages: keys.map((key) => ({ payload: key, key, properties: {} })),
    router: new RoundRobinRouter(0),
  });
}

async function keysReceived(ports: UseCasePorts, consumerId: string): Promise<string[]> {
  const messages = await receiveMessages(ports, admin, consumerId, { maxMessages: 100 });
  return messages.map((message) => message.key as string);
}

describe('Key_Shared sticky ranges: the slot and the checks', () => {
  it("a key's slot is its 31-bit Murmur3 hash modulo 65536", () => {
    for (const key of ['', 'a', 'customer-7', '0', '299', 'ключ']) {
      expect(stickySlot(key)).toBe(murmur3Hash31(key) % 65_536);
      expect(stickySlot(key)).toBeGreaterThanOrEqual(0);
      expect(stickySlot(key)).toBeLessThan(65_536);
    }
  });

  it.each([
    ['no range', [], 'must not be empty'],
    ['start after end', [{ start: 10, end: 9 }], 'start > end'],
    ['below 0', [{ start: -1, end: 9 }], 'out of 0..65535'],
    ['past 65535', [{ start: 0, end: 65_536 }], 'out of 0..65535'],
    [
      'two of its own overlapping',
      [
        { start: 0, end: 10 },
        { start: 10, end: 20 },
      ],
      'overlap',
    ],
  ])('refuses %s (400)', (_, ranges, message) => {
    expect(() => validateHashRanges(ranges)).toThrow(ValidationError);
    expect(() => validateHashRanges(ranges)).toThrow(message);
  });

  it.each([
    ['a fractional start', [{ start: 0.5, end: 9 }]],
    ['a fractional end', [{ start: 0, end: 9.5 }]],
  ])('refuses %s (400)', (_, ranges) => {
    expect(() => validateHashRanges(ranges)).toThrow(ValidationError);
  });

  it('ranges hold their ends and nothing between them', () => {
    const ranges = [
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ];
    expect([0, 10, 11, 19, 20, 30, 31].map((slot) => rangesHold(ranges, slot))).toEqual([
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('ranges that share one slot overlap, whichever side comes first', () => {
    expect(firstOverlap([{ start: 0, end: 10 }], [{ start: 10, end: 20 }])).toBeDefined();
    expect(firstOverlap([{ start: 10, end: 20 }], [{ start: 0, end: 10 }])).toBeDefined();
    expect(firstOverlap([{ start: 0, end: 9 }], [{ start: 10, end: 20 }])).toBeUndefined();
    expect(firstOverlap([{ start: 21, end: 30 }], [{ start: 10, end: 20 }])).toBeUndefined();
  });

  it('accepts the whole range, single slots and neighbouring ranges', () => {
    expect(() => validateHashRanges([{ start: 0, end: 65_535 }])).not.toThrow();
    expect(() =>
      validateHashRanges([
        { start: 5, end: 5 },
        { start: 6, end: 9 },
      ]),
    ).not.toThrow();
  });

  it('the subscribe body takes keySharedPolicy STICKY with hashRanges for Key_Shared only', () => {
    const sticky = parseSubscribeRequest(orders, 'sub', {
      subscriptionType: 'Key_Shared',
      keySharedPolicy: { keySharedMode: 'STICKY', hashRanges: [{ start: 0, end: 99 }] },
    });
    expect(sticky.hashRanges).toEqual([{ start: 0, end: 99 }]);
    expect(
      parseSubscribeRequest(orders, 'sub', {
        subscriptionType: 'Key_Shared',
        keySharedPolicy: { keySharedMode: 'AUTO_SPLIT' },
      }).hashRanges,
    ).toBeUndefined();
    expect(() =>
      parseSubscribeRequest(orders, 'sub', {
        subscriptionType: 'Shared',
        keySharedPolicy: { keySharedMode: 'STICKY', hashRanges: [{ start: 0, end: 9 }] },
      }),
    ).toThrow(ValidationError);
    expect(() =>
      parseSubscribeRequest(orders, 'sub', {
        subscriptionType: 'Key_Shared',
        keySharedPolicy: { keySharedMode: 'AUTO_SPLIT', hashRanges: [{ start: 0, end: 9 }] },
      }),
    ).toThrow(ValidationError);
  });
});

describe('Key_Shared sticky ranges: routing', () => {
  const members = [
    { consumerId: 'a', joinedAfter: Position.of(0, 0), hashRanges: [{ start: 0, end: 999 }] },
    { consumerId: 'b', joinedAfter: Position.of(0, 0), hashRanges: [{ start: 2000, end: 65_535 }] },
  ];

  it('a key goes to the member whose ranges hold its slot; a slot nobody holds has no member', () => {
    expect(memberForKey(members, keyIn(0, 999))?.consumerId).toBe('a');
    expect(memberForKey(members, keyIn(2000, 65_535))?.consumerId).toBe('b');
    expect(memberForKey(members, keyIn(1000, 1999))).toBeUndefined();
  });

  it('an entry whose key no range holds is routed to nobody (it waits)', () => {
    const head = { markDelete: Position.of(0, 0) } as DispatchHead;
    const entry = (key: string) => ({
      position: Position.of(1, 5),
      key,
      payload: '',
      properties: {},
      publishTimeMs: 0,
    });
    expect(routesTo(members, 'a', entry(keyIn(1000, 1999)), head)).toBe(false);
    expect(routesTo(members, 'b', entry(keyIn(1000, 1999)), head)).toBe(false);
    expect(routesTo(members, 'a', entry(keyIn(0, 999)), head)).toBe(true);
    expect(routesTo([], 'a', entry(keyIn(1000, 1999)), head)).toBe(true);
  });
});

describe('Key_Shared sticky ranges: subscribing and receiving', () => {
  it('each consumer gets exactly the keys its ranges hold; an unowned key waits for a consumer that takes its range', async () => {
    const { ports } = world();
    const low = await subscribe(ports, [{ start: 0, end: 29_999 }]);
    const high = await subscribe(ports, [{ start: 40_000, end: 65_535 }]);
    const keys = [keyIn(0, 29_999), keyIn(40_000, 65_535), keyIn(30_000, 39_999), keyIn(0, 29_999, 1)];
    await publish(ports, keys);

    expect(await keysReceived(ports, low.consumerId)).toEqual([keys[0], keys[3]]);
    expect(await keysReceived(ports, high.consumerId)).toEqual([keys[1]]);
    expect(await keysReceived(ports, low.consumerId)).toEqual([]);

    const middle = await subscribe(ports, [{ start: 30_000, end: 39_999 }]);
    expect(await keysReceived(ports, middle.consumerId)).toEqual([keys[2]]);
  });

  it('refuses (409) a consumer whose ranges overlap a member, and an AUTO_SPLIT consumer among sticky ones (and the other way round)', async () => {
    const { ports } = world();
    await subscribe(ports, [{ start: 0, end: 1000 }]);

    await expect(subscribe(ports, [{ start: 1000, end: 2000 }])).rejects.toBeInstanceOf(
      HashRangeConflictError,
    );
    await expect(subscribe(ports, [{ start: 1000, end: 2000 }])).rejects.toThrow('Range conflict');
    await expect(subscribe(ports)).rejects.toBeInstanceOf(HashRangeConflictError);
    await subscribe(ports, [{ start: 1001, end: 2000 }]);

    const other = world();
    await subscribe(other.ports);
    await expect(subscribe(other.ports, [{ start: 0, end: 9 }])).rejects.toBeInstanceOf(
      HashRangeConflictError,
    );
  });

  it('a refused consumer leaves nothing behind: its record is gone and its range is free for another', async () => {
    const { ports } = world();
    await subscribe(ports, [{ start: 0, end: 1000 }]);
    await expect(subscribe(ports, [{ start: 500, end: 1500 }])).rejects.toBeInstanceOf(
      HashRangeConflictError,
    );

    const members = await ports.consumers.members(subscriptionKey(orders.toString(), 'sub'), 0);
    expect(members).toHaveLength(1);
    await subscribe(ports, [{ start: 1001, end: 1500 }]);
  });

  it('consumers refused after they joined leave no join mark behind: the members receive at once', async () => {
    const { ports } = world(new BarrierRegistry(3));
    const member = subscribe(ports, [{ start: 40_000, end: 65_535 }]);
    const racing = [
      subscribe(ports, [{ start: 0, end: 1000 }]),
      subscribe(ports, [{ start: 500, end: 1500 }]),
    ];
    const outcomes = await Promise.allSettled([member, ...racing]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    const key = keyIn(40_000, 65_535);
    await publish(ports, [key]);

    expect(await keysReceived(ports, (await member).consumerId)).toEqual([key]);
  });

  it('of consumers subscribing at once with overlapping ranges, at most one joins, and those refused leave no member', async () => {
    for (const barrier of [0, 3]) {
      const { ports } = world(new BarrierRegistry(barrier));
      const outcomes = await Promise.allSettled([
        subscribe(ports, [{ start: 0, end: 1000 }]),
        subscribe(ports, [{ start: 1000, end: 2000 }]),
        subscribe(ports, [{ start: 500, end: 600 }]),
      ]);

      const joined = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(joined.length).toBeLessThanOrEqual(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(HashRangeConflictError);
      }
      const members = await ports.consumers.members(subscriptionKey(orders.toString(), 'sub'), 0);
      expect(members).toHaveLength(joined.length);
    }
  });
});
