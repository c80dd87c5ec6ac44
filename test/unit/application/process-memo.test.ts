import { describe, expect, it } from 'vitest';
import {
  consumerRecord,
  firstUnwritten,
  forgetConsumer,
  RECORD_TTL_MS,
} from '../../../shared/application/process-memo.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { Position } from '../../../shared/domain/position.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { ConsumerRecord } from '../../../shared/ports/consumer-registry.ts';
import type { ManagedLedgerState } from '../../../shared/ports/ledger.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const partition = TopicName.parse('persistent://public/default/memo');

/** Just the ports the memo reads, counting the reads. */
function portsWith(options: { consumer?: ConsumerRecord; entries?: () => number }) {
  const reads = { consumers: 0, states: 0 };
  const clock = new ManualClock(1_000);
  let consumer = options.consumer;
  const ports = {
    clock,
    consumers: {
      get: async () => {
        reads.consumers++;
        return consumer;
      },
    },
    ledger: {
      state: async (): Promise<ManagedLedgerState> => {
        reads.states++;
        return {
          partition,
          ledgers: [{ ledgerId: 7n, entries: options.entries?.() ?? 0 }],
          msgInCounter: 0,
          bytesInCounter: 0,
        } as unknown as ManagedLedgerState;
      },
    },
  } as unknown as UseCasePorts;
  const closeConsumer = () => {
    consumer = undefined;
  };
  return { ports, reads, clock, closeConsumer };
}

describe('process memo', () => {
  it('reads a consumer record once per RECORD_TTL_MS, and again at once after forgetConsumer', async () => {
    const record = { consumerId: 'c1' } as ConsumerRecord;
    const { ports, reads, clock, closeConsumer } = portsWith({ consumer: record });
    expect(await consumerRecord(ports, 'c1')).toBe(record);
    expect(await consumerRecord(ports, 'c1')).toBe(record);
    expect(reads.consumers).toBe(1);
    clock.advance(RECORD_TTL_MS);
    await consumerRecord(ports, 'c1');
    expect(reads.consumers).toBe(2);
    closeConsumer();
    forgetConsumer(ports, 'c1');
    expect(await consumerRecord(ports, 'c1')).toBeUndefined();
    expect(reads.consumers).toBe(3);
  });

  it('does not remember a missing consumer', async () => {
    const { ports, reads } = portsWith({});
    await consumerRecord(ports, 'nobody');
    await consumerRecord(ports, 'nobody');
    expect(reads.consumers).toBe(2);
  });

  it('answers written positions from the remembered ledger state and re-reads it for newer ones', async () => {
    let entries = 10;
    const { ports, reads } = portsWith({ entries: () => entries });
    expect(await firstUnwritten(ports, partition, [Position.of(7n, 9n)])).toBeUndefined();
    expect(
      await firstUnwritten(ports, partition, [Position.of(7n, 0n), Position.of(7n, 5n)]),
    ).toBeUndefined();
    expect(reads.states).toBe(1);
    // Entry 12 is beyond what was remembered: a fresh read finds it once it is written.
    expect((await firstUnwritten(ports, partition, [Position.of(7n, 12n)]))?.toString()).toBe('7:12');
    expect(reads.states).toBe(2);
    entries = 20;
    expect(await firstUnwritten(ports, partition, [Position.of(7n, 12n)])).toBeUndefined();
    expect(reads.states).toBe(3);
    expect((await firstUnwritten(ports, partition, [Position.of(8n, 0n)]))?.toString()).toBe('8:0');
  });
});
