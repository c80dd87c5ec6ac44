import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DeliveryRun } from '../../shared/domain/delivery-run.ts';
import {
  type DispatchHead,
  encodeDispatchHead,
  encodeRuns,
  newDispatchHead,
} from '../../shared/domain/dispatch-head.ts';
import { Position } from '../../shared/domain/position.ts';
import { storageBackends, useStorage } from '../support/storage-backends.ts';

// What the delivery engine's items cost, as DynamoDB bills them (dynalite and AWS's DynamoDB Local
// apply DynamoDB's size rules: a write unit per started KB of the larger of the item before and
// after, a strongly consistent read unit per started 4 KB). Values are shaped as the engine writes
// them: consumer ids of 22 characters (16 random bytes, base64url), epoch-millisecond times,
// entry ids of a busy ledger.
//
// What it found: the head is one write unit up to 13 held runs (11 with ack timeouts); at the
// engine's 16 (maxHeadRuns) it is 1.1-1.3 KB, two write units per casHead or raiseAheadAck. A page
// whose runs document holds 10 held runs with ack timeouts costs two write units per ack once it
// holds more than 80 acks. The design notes' earlier "about 0.6-0.9 KB, so 1 write unit" (now
// docs/design/delivery-engine.md#items) holds for smaller heads only.
const LEDGER = 42n;
const FIRST_ENTRY = 1_000_000n;
const T0 = 1_767_225_600_000;

/** A consumer id as the server issues them (randomIds: 16 bytes, base64url). */
const consumerId = (i: number): string => `c${i.toString().padStart(3, '0')}AbCdEfGhIjKlMnOpQr`;

/** `count` held runs of 10 entries each, one consumer per run, from FIRST_ENTRY on. */
function heldRuns(count: number, options: { ackTimeout: boolean }): DeliveryRun[] {
  return Array.from({ length: count }, (_, i) => ({
    ledgerId: LEDGER,
    entryId: FIRST_ENTRY + BigInt(10 * i),
    n: 10,
    deliveries: 1,
    state: {
      kind: 'held',
      consumerId: consumerId(i),
      deliveredAtMs: T0 + i,
      ...(options.ackTimeout ? { timeoutAtMs: T0 + 30_000 + i } : {}),
    },
  }));
}

function headWith(runs: readonly DeliveryRun[]): DispatchHead {
  return {
    ...newDispatchHead(Position.of(LEDGER, FIRST_ENTRY - 1n), Position.of(LEDGER, FIRST_ENTRY + 160n)),
    runs,
    trackerDueAtMs: T0 + 5_000,
  };
}

const bytes = (text: string): number => Buffer.byteLength(text);

describe.each(
  storageBackends().filter((backend) => backend.name !== 'in-memory'),
)('dispatch store cost on $name', (backend) => {
  const stores = useStorage(backend);
  let sequence = 0;
  /** A cursor id as the server issues them: 22 characters. */
  const newCursorId = () => `cursor${(++sequence).toString().padStart(4, '0')}AbCdEfGhIjKl`;

  it.each([
    { ackTimeout: false, encodedBytes: 836, writeUnits: 1 },
    { ackTimeout: true, encodedBytes: 980, writeUnits: 2 },
  ])('a head of 16 held runs (ack timeout: $ackTimeout) is $encodedBytes bytes encoded: casHead and raiseAheadAck cost $writeUnits write units each', async ({
    ackTimeout,
    encodedBytes,
    writeUnits,
  }) => {
    const { dispatchStore, meter } = stores();
    const cursorId = newCursorId();
    const head = headWith(heldRuns(16, { ackTimeout }));
    await dispatchStore.createHead(cursorId, headWith([]));
    await dispatchStore.raiseAheadAck(cursorId, Position.of(LEDGER, FIRST_ENTRY + 500n));

    meter?.reset();
    const outcome = await dispatchStore.casHead(cursorId, 2, head);
    const casCost = meter?.snapshot();
    meter?.reset();
    await dispatchStore.raiseAheadAck(cursorId, Position.of(LEDGER, FIRST_ENTRY + 600n));
    const raiseCost = meter?.snapshot();

    // A refused compare-and-set is billed on the item it found (partition-key-cost.test.ts).
    // Every write to the head is billed on the whole item: raising the early-ack mark too.
    const cost = { UpdateItem: { requests: 1, readCapacityUnits: 0, writeCapacityUnits: writeUnits } };
    expect(bytes(encodeDispatchHead(head))).toBe(encodedBytes);
    expect(outcome.ok).toBe(true);
    expect(casCost).toEqual(cost);
    expect(raiseCost).toEqual(cost);
  });

  it.each([
    { ackTimeout: false, units: [1, 1, 1, 1, 1, 1, 1] },
    { ackTimeout: true, units: [1, 1, 1, 1, 1, 1, 2] },
  ])('casHead to a head of 10 to 16 held runs (ack timeout: $ackTimeout) costs write units $units', async ({
    ackTimeout,
    units,
  }) => {
    const { dispatchStore, meter } = stores();
    const measured: number[] = [];

    for (let runs = 10; runs <= 16; runs++) {
      const cursorId = newCursorId();
      await dispatchStore.createHead(cursorId, headWith([]));
      await dispatchStore.raiseAheadAck(cursorId, Position.of(LEDGER, FIRST_ENTRY + 500n));
      meter?.reset();
      await dispatchStore.casHead(cursorId, 2, headWith(heldRuns(runs, { ackTimeout })));
      measured.push(meter?.totals().writeCapacityUnits ?? 0);
    }

    expect(measured).toEqual(units);
  });

  it('readHead of a head of 16 held runs with ack timeouts costs one read unit', async () => {
    const { dispatchStore, meter } = stores();
    const cursorId = newCursorId();
    await dispatchStore.createHead(cursorId, headWith(heldRuns(16, { ackTimeout: true })));
    await dispatchStore.raiseAheadAck(cursorId, Position.of(LEDGER, FIRST_ENTRY + 500n));

    meter?.reset();
    const read = await dispatchStore.readHead(cursorId);

    expect(read?.head.runs).toHaveLength(16);
    expect(meter?.snapshot()).toEqual({
      GetItem: { requests: 1, readCapacityUnits: 1, writeCapacityUnits: 0 },
    });
  });

  it.each([
    { ackTimeout: false, runsBytes: 481, units: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1] },
    { ackTimeout: true, runsBytes: 571, units: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1] },
  ])('acknowledging a page in batches of 10 when its runs document holds 10 held runs (ack timeout: $ackTimeout, $runsBytes bytes) costs write units $units', async ({
    ackTimeout,
    runsBytes,
    units,
  }) => {
    const { dispatchStore, meter } = stores();
    const cursorId = newCursorId();
    const page = FIRST_ENTRY / 100n;
    const runs = heldRuns(10, { ackTimeout });
    meter?.reset();
    await dispatchStore.casPage(cursorId, { ledgerId: LEDGER, page }, 0, { runs });
    const spill = meter?.snapshot();

    const measured: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      meter?.reset();
      await dispatchStore.acknowledge(
        cursorId,
        Array.from({ length: 10 }, (_, i) => Position.of(LEDGER, FIRST_ENTRY + BigInt(10 * batch + i))),
      );
      const cost = meter?.snapshot();
      expect(cost?.UpdateItem?.requests).toBe(1);
      measured.push(cost?.UpdateItem?.writeCapacityUnits ?? 0);
    }

    const [state] = await dispatchStore.readPages(cursorId, [{ ledgerId: LEDGER, page }]);
    expect(bytes(JSON.stringify(encodeRuns(runs)))).toBe(runsBytes);
    expect(state?.acked.size).toBe(100);
    expect(spill).toEqual({ UpdateItem: { requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 } });
    expect(measured).toEqual(units);
  });

  it('dueTracker and nextTrackerDue are one read unit each; a tracker entry is one write unit, its last holder included', async () => {
    const { dispatchStore, meter } = stores();
    const cursorId = newCursorId();
    // A released run's entry names its last holder (issue 24): a server-issued id of 22 characters.
    const entries = Array.from({ length: 30 }, (_, i) => ({
      dueAtMs: T0 + i,
      position: Position.of(LEDGER, FIRST_ENTRY + BigInt(10 * i)),
      deliveries: 1,
      n: 10,
      ...(i % 2 === 0 ? { consumerId: randomBytes(16).toString('base64url') } : {}),
    }));

    meter?.reset();
    await dispatchStore.putTracker(cursorId, entries);
    const put = meter?.snapshot().BatchWriteItem;
    meter?.reset();
    const due = await dispatchStore.dueTracker(cursorId, T0 + 100, 100);
    const dueCost = meter?.snapshot();
    meter?.reset();
    await dispatchStore.nextTrackerDue(cursorId, T0 + 3);
    const nextCost = meter?.snapshot();

    expect(due).toHaveLength(30);
    expect(put).toEqual({ requests: 2, readCapacityUnits: 0, writeCapacityUnits: 30 });
    expect(dueCost).toEqual({ Query: { requests: 1, readCapacityUnits: 1, writeCapacityUnits: 0 } });
    expect(nextCost).toEqual({ Query: { requests: 1, readCapacityUnits: 1, writeCapacityUnits: 0 } });
  });

  it('bills a refused conditional write by the item that refused it, and one unit when there is none', async () => {
    const { dispatchStore, meter } = stores();
    const cursorId = newCursorId();
    await dispatchStore.createHead(cursorId, headWith([]));
    await dispatchStore.raiseAheadAck(cursorId, Position.of(LEDGER, FIRST_ENTRY + 500n));
    meter?.reset();
    await dispatchStore.casHead(cursorId, 2, headWith(heldRuns(16, { ackTimeout: true })));
    const headWriteUnits = meter?.totals().writeCapacityUnits;

    meter?.reset();
    const created = await dispatchStore.createHead(cursorId, headWith([])); // refused: the head exists
    await dispatchStore.raiseAheadAck(newCursorId(), Position.of(LEDGER, FIRST_ENTRY)); // refused: no head
    const refused = meter?.snapshot() ?? {};

    expect(created).toBe(false);
    expect(headWriteUnits).toBe(2);
    // The head that refused the put is over 1 KB: two write units, as AWS bills it.
    expect(refused['PutItem (condition failed)']).toEqual({
      requests: 1,
      readCapacityUnits: 0,
      writeCapacityUnits: 2,
    });
    expect(refused['UpdateItem (condition failed)']).toEqual({
      requests: 1,
      readCapacityUnits: 0,
      writeCapacityUnits: 1,
    });
    // DynamoDB Local answers the refusing item with the refusal (ReturnValuesOnConditionCheckFailure);
    // dynalite ignores the parameter, and the meter bills the size it last saw of that item
    // (partition-key-meter.ts): no read of its own on either.
    expect(refused['GetItem (emulator only)']).toBeUndefined();
    expect(refused.GetItem).toBeUndefined();
  });
});
