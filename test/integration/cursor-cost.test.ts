import { describe, expect, it } from 'vitest';
import { Position } from '../../shared/domain/position.ts';
import { storageBackends, useStorage } from '../support/storage-backends.ts';

// The claims of the cursor layout: the write cost of an acknowledgement does not
// grow with the number of ack holes; the delivery check of a subscription that
// acknowledges individually reads one item; a fold writes only the pages it
// passes; a load does not read the pages mark-delete left behind. Measured with
// the capacity DynamoDB itself reports (dynalite and AWS's DynamoDB Local apply
// DynamoDB's size rules).
const HOLES = 20_000;
const LEDGER = 7n;

describe.each(
  storageBackends().filter((backend) => backend.name !== 'in-memory'),
)('acknowledgement cost on $name', (backend) => {
  const stores = useStorage(backend);

  it(`stays at one write unit per ack page with ${HOLES} holes in the cursor`, async () => {
    const { cursorStore, meter } = stores();
    await cursorStore.create('cost', Position.beforeFirst(LEDGER));
    // Every other entry acknowledged: HOLES holes, acked in requests of 500 (as a consumer groups acks).
    const acked = Array.from({ length: HOLES }, (_, i) => Position.of(LEDGER, BigInt(2 * i + 1)));
    for (let i = 0; i < acked.length; i += 500)
      await cursorStore.acknowledge('cost', acked.slice(i, i + 500));

    meter?.reset();
    await cursorStore.acknowledge('cost', [Position.of(LEDGER, 2n * BigInt(HOLES) + 1n)]);
    const single = meter?.snapshot().UpdateItem;

    meter?.reset();
    const tenInOnePage = Array.from({ length: 10 }, (_, i) =>
      Position.of(LEDGER, 2n * BigInt(HOLES) + 3n + BigInt(i)),
    );
    await cursorStore.acknowledge('cost', tenInOnePage);
    const batch = meter?.snapshot().UpdateItem;

    const stored = await cursorStore.load('cost');
    expect(stored?.acknowledged).toHaveLength(HOLES + 11);
    expect(single).toEqual({ requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 });
    expect(batch).toEqual({ requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 });
  });

  it('costs one write unit even when the page is full', async () => {
    const { cursorStore, meter } = stores();
    await cursorStore.create('full-page', Position.beforeFirst(LEDGER));
    const page = Array.from({ length: 199 }, (_, i) => Position.of(LEDGER, BigInt(200 + i)));
    await cursorStore.acknowledge('full-page', page);

    meter?.reset();
    await cursorStore.acknowledge('full-page', [Position.of(LEDGER, 399n)]);

    expect(meter?.snapshot().UpdateItem).toEqual({
      requests: 1,
      readCapacityUnits: 0,
      writeCapacityUnits: 1,
    });
  });

  it('the delivery check of a batch in an existing ack page reads one item with individualAcksOnly, two without', async () => {
    const { cursorStore, meter } = stores();
    await cursorStore.create('check', Position.beforeFirst(LEDGER));
    await cursorStore.acknowledge('check', entries(0, 10));
    const batch = entries(10, 10);

    meter?.reset();
    await cursorStore.deliveryState('check', batch, { individualAcksOnly: true });
    const pagesOnly = meter?.totals();
    meter?.reset();
    await cursorStore.deliveryState('check', batch);
    const withHead = meter?.totals();
    meter?.reset();
    await cursorStore.deliveryState('check', entries(200, 10), { individualAcksOnly: true });
    const pageMissing = meter?.totals();

    expect(pagesOnly).toEqual({ requests: 1, readCapacityUnits: 1, writeCapacityUnits: 0 });
    expect(withHead).toEqual({ requests: 1, readCapacityUnits: 2, writeCapacityUnits: 0 });
    expect(pageMissing).toEqual({ requests: 2, readCapacityUnits: 2, writeCapacityUnits: 0 });
  });

  it.each([
    { reading: 'the ack pages alone', options: { individualAcksOnly: true }, perBatch: 1, perMessage: 0.105 },
    { reading: 'mark-delete and the ack pages', options: undefined, perBatch: 2, perMessage: 0.2 },
  ])('receive then ack in batches of 10, reading $reading: the check costs $perBatch read unit(s) per batch once its page exists', async ({
    options,
    perBatch,
    perMessage,
  }) => {
    const { cursorStore, meter } = stores();
    const cursorId = `cycle-${perBatch}`;
    await cursorStore.create(cursorId, Position.beforeFirst(LEDGER));
    const batches = 40;

    const units: number[] = [];
    for (let b = 0; b < batches; b++) {
      const batch = entries(10 * b, 10);
      meter?.reset();
      await cursorStore.deliveryState(cursorId, batch, options);
      units.push(meter?.totals().readCapacityUnits ?? 0);
      await cursorStore.acknowledge(cursorId, batch);
    }

    // Batches 0 and 20 open a 200-entry page that does not exist yet: the pages-alone check
    // reads the head too (2 units), one in 20 batches.
    expect(units.filter((_, b) => b % 20 !== 0)).toEqual(Array(batches - 2).fill(perBatch));
    const average = units.reduce((sum, u) => sum + u, 0) / (10 * batches);
    expect(average).toBeLessThanOrEqual(perMessage);
    expect(average).toBeGreaterThan(perMessage - 0.01);
  });

  it('a fold writes the head and the pages it passes, and reads nothing', async () => {
    const { cursorStore, meter } = stores();
    await cursorStore.create('fold', Position.beforeFirst(LEDGER));
    await cursorStore.acknowledge('fold', entries(0, 210));
    await cursorStore.markDelete('fold', Position.of(LEDGER, 189n));

    meter?.reset();
    await cursorStore.markDelete('fold', Position.of(LEDGER, 199n));
    const endsPage = meter?.totals();
    meter?.reset();
    await cursorStore.markDelete('fold', Position.of(LEDGER, 209n));
    const insidePage = meter?.totals();

    // Head + tombstone of page 0; the head alone inside page 1 (its acks stay in its `a`).
    expect(endsPage).toEqual({ requests: 2, readCapacityUnits: 0, writeCapacityUnits: 2 });
    expect(insidePage).toEqual({ requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 });
  });

  it('load reads the head and the pages from mark-delete on, never the tombstones before it', async () => {
    const { cursorStore, meter } = stores();
    await cursorStore.create('history', Position.beforeFirst(LEDGER));
    // 100 moves of 4 pages each: 400 tombstones (about 26 KB, 7 read units if a load read them).
    for (let move = 1; move <= 100; move++) {
      await cursorStore.markDelete('history', Position.of(LEDGER, BigInt(800 * move - 1)));
    }
    await cursorStore.acknowledge('history', [Position.of(LEDGER, 80_005n), Position.of(LEDGER, 80_300n)]);

    meter?.reset();
    const loaded = await cursorStore.load('history');
    const loadUsage = meter?.totals();
    meter?.reset();
    await cursorStore.delete('history');
    const deleted = meter?.snapshot().BatchWriteItem;

    expect(loaded).toEqual({
      markDeletePosition: Position.of(LEDGER, 79_999n),
      acknowledged: [Position.of(LEDGER, 80_005n), Position.of(LEDGER, 80_300n)],
    });
    expect(loadUsage?.requests).toBe(2);
    expect(loadUsage?.readCapacityUnits).toBeLessThanOrEqual(2);
    // The tombstones were there: delete removes them with the head and the two pages after it.
    expect(deleted?.writeCapacityUnits).toBe(403);
  });
});

/** `count` consecutive entries of LEDGER from `first`. */
function entries(first: number, count: number): Position[] {
  return Array.from({ length: count }, (_, i) => Position.of(LEDGER, BigInt(first + i)));
}
