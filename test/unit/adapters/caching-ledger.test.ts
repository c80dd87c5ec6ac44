import { describe, expect, it } from 'vitest';
import { CachingLedger, LEDGER_STATE_TTL_MS } from '../../../shared/adapters/caching-ledger.ts';
import { Position } from '../../../shared/domain/position.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { ManagedLedgerState } from '../../../shared/ports/ledger.ts';
import { InMemoryLedger, InMemoryLedgerTables } from '../../support/in-memory-ledger.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const partition = TopicName.parse('persistent://public/default/cached');

/** The in-memory ledger (first ledger id 7), counting its state and owner reads. */
class CountingLedger extends InMemoryLedger {
  states = 0;
  owners = 0;

  constructor() {
    super(1000, new InMemoryLedgerTables(7n));
  }

  override async state(name: TopicName): Promise<ManagedLedgerState | undefined> {
    this.states++;
    return super.state(name);
  }

  override async ownerOf(ledgerId: bigint): Promise<TopicName | undefined> {
    this.owners++;
    return super.ownerOf(ledgerId);
  }

  async publish(count: number): Promise<void> {
    const entries = Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {} }));
    await this.append(partition, entries, 1);
  }
}

async function cached(entries: number) {
  const store = new CountingLedger();
  await store.initialize(partition);
  await store.publish(entries);
  const clock = new ManualClock(1_000_000);
  return { store, clock, ledger: new CachingLedger(store, clock) };
}

describe('CachingLedger', () => {
  it('answers written positions from the remembered ledger state and re-reads it for newer ones', async () => {
    const { store, ledger } = await cached(10);

    expect(await ledger.firstUnwritten(partition, [Position.of(7n, 9n)])).toBeUndefined();
    expect(
      await ledger.firstUnwritten(partition, [Position.of(7n, 0n), Position.of(7n, 5n)]),
    ).toBeUndefined();
    expect(store.states).toBe(1);
    // Entry 12 is beyond what was remembered: a fresh read finds it once it is written.
    expect((await ledger.firstUnwritten(partition, [Position.of(7n, 12n)]))?.toString()).toBe('7:12');
    expect(store.states).toBe(2);
    await store.publish(10);
    expect(await ledger.firstUnwritten(partition, [Position.of(7n, 12n)])).toBeUndefined();
    expect(store.states).toBe(3);
    expect((await ledger.firstUnwritten(partition, [Position.of(8n, 0n)]))?.toString()).toBe('8:0');
  });

  it('reads the state for the idle path at most once per LEDGER_STATE_TTL_MS, not trusting one firstUnwritten read', async () => {
    const { store, clock, ledger } = await cached(1);

    await ledger.recentState(partition);
    clock.advance(LEDGER_STATE_TTL_MS - 1);
    await ledger.recentState(partition);
    expect(store.states).toBe(1);
    clock.advance(1);
    expect((await ledger.recentState(partition))?.ledgers[0]?.entries).toBe(1n);
    expect(store.states).toBe(2);
    await store.publish(1);
    await ledger.firstUnwritten(partition, [Position.of(7n, 1n)]);
    await ledger.recentState(partition);
    expect(store.states).toBe(4);
  });

  it("reads a ledger's owner once (a ledger never changes hands), and keeps no missing one", async () => {
    const { store, ledger } = await cached(1);

    expect((await ledger.knownOwnerOf(7n))?.toString()).toBe(partition.toString());
    await ledger.knownOwnerOf(7n);
    await ledger.knownOwnerOf(99n);
    await ledger.knownOwnerOf(99n);

    expect(store.owners).toBe(3);
  });
});
