import { describe, expect, it } from 'vitest';
import type { KeyUsage } from '../../shared/adapters/dynamodb/partition-key-meter.ts';
import type { DeliveryRun } from '../../shared/domain/delivery-run.ts';
import { type DispatchHead, newDispatchHead } from '../../shared/domain/dispatch-head.ts';
import { Position } from '../../shared/domain/position.ts';
import { storageBackends, useStorage } from '../support/storage-backends.ts';

// The capacity meter by partition key (issue 22, criterion 3): every unit DynamoDB reports is
// attributed to the partition key of the request (a Query's from its key condition, a batch's
// shared among its items), and a compare-and-set refused by its condition is billed as AWS bills
// it, on the size of the item it found: DynamoDB Local answers the refusal with the item
// (ReturnValuesOnConditionCheckFailure), dynalite does not, and the meter then bills the size it
// last saw of the item.
const LEDGER = 42n;
const FIRST_ENTRY = 1_000_000n;
const T0 = 1_767_225_600_000;

/** A head of `count` held runs of 10 entries with ack timeouts: 16 make an item of 1,011 bytes, 20 of 1,239. */
function headOf(count: number): DispatchHead {
  const runs: DeliveryRun[] = Array.from({ length: count }, (_, i) => ({
    ledgerId: LEDGER,
    entryId: FIRST_ENTRY + BigInt(10 * i),
    n: 10,
    deliveries: 1,
    state: {
      kind: 'held',
      consumerId: `c${i.toString().padStart(3, '0')}AbCdEfGhIjKlMnOpQr`,
      deliveredAtMs: T0 + i,
      timeoutAtMs: T0 + 30_000 + i,
    },
  }));
  return {
    ...newDispatchHead(Position.of(LEDGER, FIRST_ENTRY - 1n), Position.of(LEDGER, FIRST_ENTRY + 160n)),
    runs,
    trackerDueAtMs: T0 + 5_000,
  };
}

const sum = (keys: readonly KeyUsage[], field: 'readCapacityUnits' | 'writeCapacityUnits') =>
  keys.reduce((total, key) => total + key[field], 0);

describe.each(
  storageBackends().filter((backend) => backend.name !== 'in-memory'),
)('capacity by partition key on $name', (backend) => {
  const stores = useStorage(backend);
  let sequence = 0;
  const newCursorId = () => `key${(++sequence).toString().padStart(4, '0')}AbCdEfGhIjKlMnO`;

  it('bills a refused compare-and-set of a two-unit head two write units, and counts it on the head', async () => {
    const { dispatchStore, meter } = stores();
    const cursorId = newCursorId();
    await dispatchStore.createHead(cursorId, headOf(20));

    meter?.reset();
    const refused = await dispatchStore.casHead(cursorId, 7, headOf(19));
    const committed = await dispatchStore.casHead(cursorId, 1, headOf(20));

    expect(refused.ok).toBe(false);
    expect(committed.ok).toBe(true);
    expect(meter?.snapshot()['UpdateItem (condition failed)']).toEqual({
      requests: 1,
      readCapacityUnits: 0,
      writeCapacityUnits: 2,
    });
    expect(meter?.compareAndSetUsage()).toEqual([
      { table: 'Cursors', partitionKey: cursorId, sortKey: 'H', committed: 1, refused: 1 },
    ]);
    const [cursor] = meter?.keyUsage() ?? [];
    expect(cursor).toMatchObject({ table: 'Cursors', partitionKey: cursorId, failedConditions: 1 });
    // The refusal's two units and the committed write's two, on the cursor's partition key.
    expect(cursor?.writeCapacityUnits).toBe(4);
  });

  it('bills a refused write at least one unit when it knows nothing of the item', async () => {
    const { dispatchStore, meter } = stores();

    meter?.reset();
    const outcome = await dispatchStore.casHead(newCursorId(), 3, headOf(1));

    expect(outcome).toEqual({ ok: false, current: undefined });
    expect(meter?.snapshot()['UpdateItem (condition failed)']?.writeCapacityUnits).toBe(1);
  });

  it('attributes every unit to a partition key: single items, batches and Queries alike', async () => {
    const { dispatchStore, meter } = stores();
    const cursorId = newCursorId();
    const other = newCursorId();
    const tracker = (i: number) => ({
      dueAtMs: T0 + i,
      position: Position.of(LEDGER, BigInt(i)),
      deliveries: 1,
      n: 1,
    });

    meter?.reset();
    await dispatchStore.createHead(cursorId, headOf(2));
    await dispatchStore.acknowledge(cursorId, [Position.of(LEDGER, 1n), Position.of(LEDGER, 150n)]);
    await dispatchStore.putTracker(cursorId, [tracker(1), tracker(2), tracker(3)]);
    await dispatchStore.putTracker(other, [tracker(1)]);
    const due = await dispatchStore.dueTracker(cursorId, T0 + 10, 10);
    await dispatchStore.readPages(cursorId, [
      { ledgerId: LEDGER, page: 0n },
      { ledgerId: LEDGER, page: 1n },
    ]);
    const keys = meter?.keyUsage() ?? [];

    expect(due).toHaveLength(3);
    const totals = meter?.totals();
    expect(sum(keys, 'writeCapacityUnits')).toBeCloseTo(totals?.writeCapacityUnits ?? Number.NaN, 9);
    expect(sum(keys, 'readCapacityUnits')).toBeCloseTo(totals?.readCapacityUnits ?? Number.NaN, 9);
    expect(keys.map((key) => key.partitionKey).sort()).toEqual([cursorId, other].sort());
    const cursor = keys.find((key) => key.partitionKey === cursorId);
    expect(Object.keys(cursor?.byItemKind ?? {}).sort()).toEqual(['H', 'P#', 'R#', 'query']);
    expect(cursor?.byItemKind['R#']?.writeCapacityUnits).toBe(3);
    expect(cursor?.requests).toBe(1 + 2 + 3 + 1 + 2);
  });
});
