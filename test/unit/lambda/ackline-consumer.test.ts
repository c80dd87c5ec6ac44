// acklineConsumer(): the user's handler, invoked by the subscription runner with a batch. It
// processes the batch in the order the subscription type allows and names what threw.
import { describe, expect, it } from 'vitest';
import type { BatchOrder, ConsumerMessage } from '../../../shared/application/consumers/consumer-message.ts';
import { acklineConsumer } from '../../../shared/lambda/ackline-consumer.ts';

const message = (id: string, key: string | null): ConsumerMessage => ({
  messageId: id,
  payload: `p${id}`,
  key,
  properties: {},
  redeliveryCount: 0,
  publishTime: 1_700_000_000_000,
  eventTime: null,
});

/** A process() that takes a turn of the event loop, logging when each message starts and ends. */
function tracing(fails: readonly string[] = []) {
  const log: string[] = [];
  const process = async (m: ConsumerMessage) => {
    log.push(`start ${m.messageId}`);
    await new Promise((resolve) => setImmediate(resolve));
    log.push(`end ${m.messageId}`);
    if (fails.includes(m.messageId)) throw new Error(`no ${m.messageId}`);
  };
  return { log, process };
}

const batch = (order: BatchOrder, messages: readonly ConsumerMessage[]) => ({
  acklineBatch: { order, messages },
});

describe('acklineConsumer', () => {
  it('names the messages whose process() threw; the others succeeded', async () => {
    const { process } = tracing(['2']);
    const handler = acklineConsumer({ process });
    const response = await handler(batch('concurrent', [message('1', null), message('2', null)]));
    expect(response).toEqual({ acklineFailures: [{ messageId: '2', error: 'Error: no 2' }] });
  });

  it('processes a sequential batch (Exclusive, Failover) one message after another, past a failure', async () => {
    const { log, process } = tracing(['1']);
    await acklineConsumer({ process })(batch('sequential', [message('1', 'a'), message('2', 'b')]));
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('processes a Key_Shared batch one key after another, keys at once', async () => {
    const { log, process } = tracing();
    await acklineConsumer({ process })(
      batch('byKey', [message('1', 'a'), message('2', 'b'), message('3', 'a')]),
    );
    const at = (entry: string) => log.indexOf(entry);
    expect(at('start 2')).toBeLessThan(at('end 1')); // keys a and b at once
    expect(at('start 3')).toBeGreaterThan(at('end 1')); // a's second message after its first
    expect(log).toHaveLength(6);
  });

  it('processes a Shared batch all at once', async () => {
    const { log, process } = tracing();
    await acklineConsumer({ process })(batch('concurrent', [message('1', 'a'), message('2', 'a')]));
    expect(log).toEqual(['start 1', 'start 2', 'end 1', 'end 2']);
  });

  it('refuses an event that is not a batch of its runner (an SQS event, say): the invocation fails', async () => {
    const handler = acklineConsumer({ process: () => {} });
    const sqsEvent = { Records: [{ messageId: 'm', eventSourceARN: 'arn', body: '' }] };
    await expect(handler(sqsEvent as never)).rejects.toThrow(/AcklineSubscriptionConsumer/);
  });
});
