import { describe, expect, it } from 'vitest';
import type { AcklineClient } from '../../../shared/client/ackline-client.ts';
import type { Consumer as AcklineConsumer } from '../../../shared/client/consumer.ts';
import { AcklineClientError } from '../../../shared/client/errors.ts';
import { Message as AcklineMessage } from '../../../shared/client/message.ts';
import { Reader as SdkReader } from '../../../shared/client/reader.ts';
import { MessageId } from '../../../shared/domain/message-id.ts';
import { CompatLogger } from '../../../shared/pulsar-client/log.ts';
import { Reader } from '../../../shared/pulsar-client/reader.ts';
import { LogLevel } from '../../../shared/pulsar-client/types.ts';

// A compat reader's close() against an in-memory SDK consumer whose cumulative acks the test settles
// by hand: as the server, an ack that arrives after the subscription was deleted is refused (409).

function fakeSource(messageCount: number, refuseAcks = false) {
  const events: string[] = [];
  const pendingAcks: (() => void)[] = [];
  let unsubscribed = false;
  let received = 0;
  const source = {
    receive: () => {
      if (received >= messageCount) return new Promise(() => undefined);
      received += 1;
      return Promise.resolve(
        new AcklineMessage({
          messageId: MessageId.parse(`7:${received}:-1`),
          value: `m${received}`,
          key: undefined,
          properties: {},
          redeliveryCount: 0,
          publishTimeMs: 0,
          eventTimeMs: 0,
          topicName: 'persistent://t/ns/topic',
          deliveryHandle: undefined,
        }),
      );
    },
    // The compat reader acknowledges by id, the SDK reader by message.
    acknowledgeCumulative: (acked: MessageId | AcklineMessage) =>
      new Promise<void>((resolve, reject) => {
        const id = (acked instanceof AcklineMessage ? acked.getMessageId() : acked).toString();
        events.push(`ack ${id} sent`);
        pendingAcks.push(() => {
          events.push(`ack ${id} answered`);
          if (!unsubscribed && !refuseAcks) return resolve();
          reject(new AcklineClientError(409, 'Consumer c1 is not the active consumer (epoch 2)'));
        });
      }),
    unsubscribe: async () => {
      unsubscribed = true;
      events.push('unsubscribe');
    },
    close: async () => undefined,
  };
  const answerAcks = () => {
    for (const answer of pendingAcks.splice(0)) answer();
  };
  return { source: source as unknown as AcklineConsumer, events, answerAcks };
}

function readerOver(source: AcklineConsumer) {
  const logged: { level: LogLevel; message: string }[] = [];
  const logger = new CompatLogger(
    (level, _file, _line, message) => logged.push({ level, message }),
    LogLevel.DEBUG,
  );
  const sdk = {
    admin: () => ({ topics: () => ({ resetCursor: async () => ({ subscriptions: {} }) }) }),
  } as unknown as AcklineClient;
  const context = { sdk, logger, open: new Set<{ close(): Promise<null> }>(), lastPublished: new Map() };
  const reader = new Reader({
    context,
    config: { topic: 'persistent://t/ns/topic', startMessageId: undefined as never },
    topic: 'persistent://t/ns/topic',
    subscription: 'reader-1',
    source,
  });
  return { reader, logged };
}

const ticks = async (n: number) => {
  for (let i = 0; i < n; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('compat Reader.close() and its cumulative ack in flight', () => {
  it('deletes the subscription only after the in-flight ack is answered, and logs no WARN', async () => {
    const { source, events, answerAcks } = fakeSource(3);
    const { reader, logged } = readerOver(source);
    for (let i = 0; i < 3; i += 1) await reader.readNext(1_000);
    const closed = reader.close();
    await ticks(5);
    expect(events).not.toContain('unsubscribe');
    answerAcks();
    await closed;
    expect(events).toEqual(['ack 7:1:-1 sent', 'ack 7:1:-1 answered', 'unsubscribe']);
    expect(logged.filter((l) => l.level >= LogLevel.WARN)).toEqual([]);
  });

  it('logs an ack refused while the reader closes at DEBUG, and one refused while open at WARN', async () => {
    const open = fakeSource(1, true);
    const before = readerOver(open.source);
    await before.reader.readNext(1_000);
    open.answerAcks();
    await ticks(5);
    expect(before.logged.map((l) => l.level)).toEqual([LogLevel.WARN]);

    const closing = fakeSource(1, true);
    const { reader, logged } = readerOver(closing.source);
    await reader.readNext(1_000);
    const closed = reader.close();
    closing.answerAcks();
    await closed;
    expect(logged.map((l) => [l.level, l.message.slice(0, 10)])).toEqual([[LogLevel.DEBUG, 'ack failed']]);
    await before.reader.close();
  });
});

describe('SDK Reader.close() (shared/client/reader.ts) has no such race', () => {
  it('deletes the subscription only after the in-flight ack is answered', async () => {
    const { source, events, answerAcks } = fakeSource(2);
    const reader = new SdkReader(source, undefined);
    await reader.readNext(1_000);
    await reader.readNext(1_000);
    const closed = reader.close();
    await ticks(5);
    expect(events).not.toContain('unsubscribe');
    answerAcks();
    await ticks(5);
    answerAcks();
    await closed;
    expect(events).toEqual([
      'ack 7:1:-1 sent',
      'ack 7:1:-1 answered',
      'ack 7:2:-1 sent',
      'ack 7:2:-1 answered',
      'unsubscribe',
    ]);
  });
});
