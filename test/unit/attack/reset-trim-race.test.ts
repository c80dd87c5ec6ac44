// A reset racing retention: the reset reads the first kept position, retention (which read every
// mark-delete before the reset moved it) then deletes past it. The rewound cursor must not be
// left pointing at deleted entries: what the reset re-delivers is what retention kept, at once.
import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../shared/application/consumers/receive-messages.ts';
import { enforcePolicies } from '../../../shared/application/maintenance/enforce-policies.ts';
import { maintainSubscriptions } from '../../../shared/application/maintenance/maintain-subscriptions.ts';
import { resetCursorToEdge } from '../../../shared/application/subscriptions/reset-subscription.ts';
import { setRetention } from '../../../shared/application/tenancy/manage-policies.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import { getTopicStats } from '../../../shared/application/topics/topic-stats.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../support/manual-clock.ts';
import { consumeAll, publishPayloads, sharedEarliestConsumer } from '../../support/use-case-steps.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://tenant/ns/reset-trim-race');

describe('reset to earliest racing a retention run', () => {
  it.each([
    ['the reset lands between retention reading the cursors and trimming', 'during-trim'],
    [
      'retention trims between the reset reading the first kept position and moving the cursor',
      'during-reset',
    ],
  ])('%s: the cursor starts at what was kept', async (_label, when) => {
    const clock = new ManualClock(1_700_000_000_000);
    const { ports } = inMemoryPorts({
      clock,
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
    });
    const consumerId = await sharedEarliestConsumer(ports, admin, topic);
    await publishPayloads(ports, admin, topic, ['gone-0', 'gone-1', 'gone-2']);
    await publishPayloads(ports, admin, topic, ['kept-0', 'kept-1']);
    await consumeAll(ports, admin, consumerId);
    await maintainSubscriptions(ports, { deadlineMs: clock.nowMs() + 60_000 });
    await setRetention(ports, admin, { topic }, { retentionTimeInMinutes: 0, retentionSizeInMB: 0 });
    const request = { topic, subscriptionName: 'sub', dryRun: false, principal: admin, requestId: 'r' };
    const ledger = ports.ledger;
    const trimAll = () => enforcePolicies(ports, { deadlineMs: clock.nowMs() + 60_000 });
    const realTrim = ledger.trim.bind(ledger);
    const realState = ledger.state.bind(ledger);
    let interposed = false;
    if (when === 'during-trim') {
      // Retention has read every mark-delete (all consumed); the reset moves the cursor back now.
      ledger.trim = async (partition, trimRequest) => {
        if (!interposed) {
          interposed = true;
          await resetCursorToEdge(ports, { ...request, edge: 'earliest' });
        }
        return realTrim(partition, trimRequest);
      };
      await trimAll();
    } else {
      // The reset read the state (nothing deleted yet); retention runs before it moves the cursor.
      let reads = 0;
      ledger.state = async (partition) => {
        const state = await realState(partition);
        if (!interposed && ++reads === 2) {
          interposed = true;
          await trimAll();
        }
        return state;
      };
      await resetCursorToEdge(ports, { ...request, edge: 'earliest' });
      ledger.state = realState;
    }
    expect(interposed).toBe(true);
    expect((await ledger.state(topic))?.firstKept?.toString()).toMatch(/:5$/);

    // At once (no wait for deleted ids to count as abandoned): nothing deleted, nothing kept.
    const again = await receiveMessages(ports, admin, consumerId, { maxMessages: 100 });
    expect(again.map((m) => m.payload)).toEqual([]);
    expect((await getTopicStats(ports, admin, topic)).subscriptions.sub?.msgBacklog).toBe(0);
    await publishPayloads(ports, admin, topic, ['new']);
    const next = await receiveMessages(ports, admin, consumerId, { maxMessages: 100 });
    expect(next.map((m) => m.payload)).toEqual(['new']);
  });
});
