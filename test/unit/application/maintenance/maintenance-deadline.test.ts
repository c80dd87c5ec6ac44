// Maintenance runs every minute for less than a minute (infra/api-routes.ts), so a run must stop
// taking work at its deadline (the handler takes it from the Lambda context's remaining time) and
// leave the rest to the next run, which starts where it stopped. Time is a ManualClock: reading a
// cursor's head takes READ_MS of it.
import { describe, expect, it } from 'vitest';
import { MARK_EVERY_MS } from '../../../../shared/application/maintenance/activity.ts';
import { maintainSubscriptions } from '../../../../shared/application/maintenance/maintain-subscriptions.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import { skipMessages } from '../../../../shared/application/subscriptions/skip-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryActivityIndex } from '../../../support/in-memory-activity-index.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const router = new RoundRobinRouter(0);
const READ_MS = 1_000;

/** A dispatch store whose head reads take `readMs` of the clock, and which counts them. */
class TimedDispatchStore extends InMemoryDispatchStore {
  reads = 0;
  readMs = 0;
  constructor(private readonly clock: ManualClock) {
    super();
  }
  override async readHead(cursorId: string) {
    this.reads++;
    this.clock.advance(this.readMs);
    return super.readHead(cursorId);
  }
}

/** `count` subscriptions, each on its own topic, each having consumed its one message: a visit settles it. */
async function world(count: number) {
  const clock = new ManualClock(1_700_000_000_000);
  const activity = new InMemoryActivityIndex();
  void activity.markSeeded();
  const dispatch = new TimedDispatchStore(clock);
  const { ports } = inMemoryPorts({
    clock,
    activity,
    dispatch,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  for (let i = 0; i < count; i++) {
    const topic = TopicName.parse(`persistent://public/deadline/t${String(i).padStart(2, '0')}`);
    await createTopic(ports, admin, topic, 0);
    await createSubscription(ports, admin, topic, {
      name: 'sub',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    await publishMessages(ports, admin, topic, { messages: [{ payload: 'm', properties: {} }], router });
    await skipMessages(ports, admin, topic, { subscriptionName: 'sub', numMessages: 1 });
  }
  clock.advance(MARK_EVERY_MS);
  dispatch.reads = 0;
  return { clock, activity, dispatch, ports: ports as UseCasePorts };
}

describe('maintenance stops taking work at its deadline', () => {
  it('with the deadline reached, takes no subscription and returns them all for the next run', async () => {
    const w = await world(3);

    const stopped = await maintainSubscriptions(w.ports, { deadlineMs: w.clock.nowMs() });

    expect(stopped).toMatchObject({ due: 3, visited: 0, settled: 0, left: 3 });
    expect(stopped.resumeAfter).toBeDefined();
    expect(w.dispatch.reads).toBe(0);
    expect(w.activity.entries.size).toBe(3);

    const next = await maintainSubscriptions(w.ports, {
      deadlineMs: w.clock.nowMs() + 30_000,
      ...(stopped.resumeAfter === undefined ? {} : { resumeAfter: stopped.resumeAfter }),
    });

    expect(next).toMatchObject({ due: 3, visited: 3, settled: 3, left: 0 });
    expect(next.resumeAfter).toBeUndefined();
    expect(w.activity.entries.size).toBe(0);
  });

  it('with the deadline passing during the run, finishes what it started, starts nothing after, and the next run takes the rest', async () => {
    const w = await world(20);
    w.dispatch.readMs = READ_MS;
    // Half a read's time: the deadline passes while the first visits read their cursors.
    const deadlineMs = w.clock.nowMs() + READ_MS / 2;

    const stopped = await maintainSubscriptions(w.ports, { deadlineMs });

    expect(stopped.visited).toBeGreaterThan(0);
    expect(stopped.visited).toBeLessThan(20);
    expect(stopped.left).toBe(20 - stopped.visited);
    // What it started, it finished: every visited subscription settled.
    expect(stopped.settled).toBe(stopped.visited);
    expect(w.activity.entries.size).toBe(stopped.left);

    w.dispatch.readMs = 0;
    const next = await maintainSubscriptions(w.ports, {
      deadlineMs: w.clock.nowMs() + 30_000,
      ...(stopped.resumeAfter === undefined ? {} : { resumeAfter: stopped.resumeAfter }),
    });

    expect(next).toMatchObject({ due: stopped.left, visited: stopped.left, left: 0 });
    expect(w.activity.entries.size).toBe(0);
  });
});
