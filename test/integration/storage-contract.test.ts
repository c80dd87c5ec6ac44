import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  NamespaceAlreadyExistsError,
  SubscriptionAlreadyExistsError,
  TenantAlreadyExistsError,
  TopicAlreadyExistsError,
  TopicNotFoundError,
} from '../../shared/domain/catalog-errors.ts';
import type { DeliveryRun } from '../../shared/domain/delivery-run.ts';
import { type DispatchHead, newDispatchHead } from '../../shared/domain/dispatch-head.ts';
import { MAX_ID } from '../../shared/domain/non-negative-id.ts';
import { Position } from '../../shared/domain/position.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import { type AuditRecord, DEFAULT_AUDIT_RETENTION_DAYS } from '../../shared/ports/audit-log.ts';
import type { PageRef, PageState, TrackerEntry } from '../../shared/ports/dispatch-store.ts';
import type { NewEntry, StoredEntry } from '../../shared/ports/ledger.ts';
import { REMOVE_ALL_POLICIES } from '../../shared/ports/policy-store.ts';
import type { SubscriptionRecord, TopicRecord } from '../../shared/ports/topic-catalog.ts';
import { InMemoryCursorStore } from '../support/in-memory-cursor-store.ts';
import { InMemoryLedger } from '../support/in-memory-ledger.ts';
import { InMemoryPermissionStore } from '../support/in-memory-permission-store.ts';
import { InMemoryTopicCatalog } from '../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { type StorageStores, storageBackends, useStorage } from '../support/storage-backends.ts';

// One contract per storage port, run over the in-memory fakes, dynalite and DynamoDB Local.
// Each backend gets fresh tables; inside a backend, tests share them and stay apart by using
// their own cursor ids, topics and namespaces.

let sequence = 0;

/**
 * `call` (one compare-and-set) as the AWS SDK makes it when its first attempt applied and its answer
 * was lost: the same request is sent again and its answer returned. On DynamoDB a middleware sends
 * the serialized request twice; in memory the call is made twice with the same arguments.
 */
async function retriedAfterTimeout<T>(stores: StorageStores, call: () => Promise<T>): Promise<T> {
  const client = stores.dynamodb?.client;
  if (!client) {
    await call();
    return call();
  }
  const name = `sentTwice-${randomUUID()}`;
  client.middlewareStack.add(
    (next) => async (args) => {
      await next(args).catch(() => undefined);
      return next(args);
    },
    { step: 'finalizeRequest', name },
  );
  try {
    return await call();
  } finally {
    client.middlewareStack.remove(name);
  }
}

function uniqueId(prefix: string): string {
  sequence += 1;
  return `${prefix}-${sequence}-${randomUUID().slice(0, 8)}`;
}

function uniqueNamespace(): string {
  return `contract/${uniqueId('ns')}`;
}

function uniquePartition(): TopicName {
  return TopicName.parse(`persistent://${uniqueNamespace()}/orders`).partition(0);
}

const pos = (ledgerId: bigint | number, entryId: bigint | number): Position => Position.of(ledgerId, entryId);

const texts = (positions: readonly Position[] | undefined): string[] => (positions ?? []).map(String);

function entry(payload: string, fields: Partial<NewEntry> = {}): NewEntry {
  return { payload, properties: {}, ...fields };
}

interface HeldFields {
  readonly consumerId: string;
  readonly deliveries: number;
  readonly deliveredAtMs: number;
  readonly timeoutAtMs: number;
}

interface ReleasedFields {
  readonly dueAtMs: number;
  /** Default 1. */
  readonly deliveries?: number;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe.each(storageBackends())('storage contract on $name', (backend) => {
  const storage = useStorage(backend);

  describe('CursorStore', () => {
    it.each([
      ['an entry', Position.of(5, 9)],
      ['before the first entry of a ledger (L:-1)', Position.beforeFirst(7n)],
    ])('create then load gives back the mark-delete position at %s and no acks', async (_, markDelete) => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');

      await cursorStore.create(cursorId, markDelete);
      const loaded = await cursorStore.load(cursorId);

      expect(loaded).toEqual({ markDeletePosition: markDelete, acknowledged: [] });
      expect(loaded?.markDeletePosition.toString()).toBe(markDelete.toString());
      expect(loaded?.markDeletePosition.isBeforeFirst).toBe(markDelete.isBeforeFirst);
    });

    it('load of a cursor never created gives undefined', async () => {
      const { cursorStore } = storage();

      const loaded = await cursorStore.load(uniqueId('missing'));

      expect(loaded).toBeUndefined();
    });

    it('a create on an existing cursor fails and leaves the cursor as it was', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, pos(2, 5));
      await cursorStore.acknowledge(cursorId, [pos(2, 9)]);

      await expect(cursorStore.create(cursorId, Position.beforeFirst(1n))).rejects.toThrow();

      const loaded = await cursorStore.load(cursorId);
      expect(loaded?.markDeletePosition).toEqual(pos(2, 5));
      expect(texts(loaded?.acknowledged)).toEqual(['2:9']);
    });

    it('acknowledge is idempotent: positions acknowledged twice are stored once', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(3n));

      await cursorStore.acknowledge(cursorId, [pos(3, 4), pos(3, 1)]);
      await cursorStore.acknowledge(cursorId, [pos(3, 1), pos(3, 4), pos(3, 4)]);
      await cursorStore.acknowledge(cursorId, []);

      const loaded = await cursorStore.load(cursorId);
      expect(texts(loaded?.acknowledged)).toEqual(['3:1', '3:4']);
    });

    it('acks spread over several ack pages and ledgers come back in ascending position order', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(2n));
      // Ledgers 9, 10 and 100 order differently as text; entries cross 200-entry page boundaries.
      const acknowledged = [
        pos(10, 300),
        pos(9, 5),
        pos(100, 70_000),
        pos(10, 0),
        pos(9, 200),
        pos(10, 199),
        pos(100, 3),
        pos(10, 200),
        pos(2, 1),
        pos(10, 1_000_000),
      ];

      await cursorStore.acknowledge(cursorId, acknowledged.slice(0, 4));
      await cursorStore.acknowledge(cursorId, acknowledged.slice(4, 7));
      await cursorStore.acknowledge(cursorId, acknowledged.slice(7));

      const loaded = await cursorStore.load(cursorId);
      expect(texts(loaded?.acknowledged)).toEqual(texts([...acknowledged].sort(Position.compare)));
    });

    it('isAcknowledged: true at or before mark-delete and for acks after it, false otherwise, in query order', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, pos(4, 10));
      await cursorStore.acknowledge(cursorId, [pos(4, 20), pos(5, 300)]);

      const answers = await cursorStore.isAcknowledged(cursorId, [
        pos(3, 999),
        pos(4, 5),
        pos(4, 10),
        pos(4, 20),
        pos(4, 21),
        pos(5, 299),
        pos(5, 300),
        pos(4, 20),
      ]);

      expect(answers).toEqual([true, true, true, true, false, false, true, true]);
    });

    it('isAcknowledged of a cursor never created answers false for every position', async () => {
      const { cursorStore } = storage();

      const answers = await cursorStore.isAcknowledged(uniqueId('missing'), [
        pos(1, 0),
        pos(0, 0),
        pos(7, 7),
      ]);

      expect(answers).toEqual([false, false, false]);
    });

    it('isAcknowledged of no positions answers an empty list', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, pos(1, 1));

      const answers = await cursorStore.isAcknowledged(cursorId, []);

      expect(answers).toEqual([]);
    });

    it('markDelete never moves backwards: a lower position later changes nothing', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(6n));
      await cursorStore.acknowledge(cursorId, [pos(6, 3), pos(6, 150), pos(6, 400), pos(6, 900)]);
      await cursorStore.markDelete(cursorId, pos(6, 200));
      const before = await cursorStore.load(cursorId);

      await cursorStore.markDelete(cursorId, pos(6, 100));
      await cursorStore.markDelete(cursorId, Position.beforeFirst(6n));
      await cursorStore.markDelete(cursorId, pos(6, 200));

      const after = await cursorStore.load(cursorId);
      expect(after).toEqual(before);
      expect(after?.markDeletePosition).toEqual(pos(6, 200));
      expect(await cursorStore.isAcknowledged(cursorId, [pos(6, 150), pos(6, 201), pos(6, 400)])).toEqual([
        true,
        false,
        true,
      ]);
    });

    it('markDelete at the end of an ack page forgets the acks it covers and keeps every ack after it', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(3n));
      const after = [pos(4, 400), pos(4, 401), pos(4, 700), pos(5, 0)];
      const covered = [pos(3, 0), pos(3, 199), pos(3, 600), pos(4, 0), pos(4, 10), pos(4, 200), pos(4, 399)];
      await cursorStore.acknowledge(cursorId, [...covered, ...after]);

      // 4:399 ends a 400-entry block, so every page it touches is wholly covered.
      await cursorStore.markDelete(cursorId, pos(4, 399));

      const loaded = await cursorStore.load(cursorId);
      expect(loaded?.markDeletePosition).toEqual(pos(4, 399));
      expect(texts(loaded?.acknowledged)).toEqual(texts(after));
    });

    it('markDelete inside an ack page keeps every ack after it and invents none', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(8n));
      const acknowledged = [pos(8, 1), pos(8, 99), pos(8, 100), pos(8, 101), pos(8, 102), pos(9, 0)];
      await cursorStore.acknowledge(cursorId, acknowledged);

      await cursorStore.markDelete(cursorId, pos(8, 100));

      const loaded = await cursorStore.load(cursorId);
      const markDelete = pos(8, 100);
      expect(texts(loaded?.acknowledged.filter((p) => p.compareTo(markDelete) > 0))).toEqual([
        '8:101',
        '8:102',
        '9:0',
      ]);
      expect(texts(acknowledged)).toEqual(expect.arrayContaining(texts(loaded?.acknowledged)));
    });

    it('delete removes the head and every ack page: a cursor created again under that id starts empty', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(1n));
      await cursorStore.acknowledge(cursorId, [pos(1, 5), pos(1, 700), pos(2, 3), pos(3, 100_000)]);

      await cursorStore.delete(cursorId);

      expect(await cursorStore.load(cursorId)).toBeUndefined();
      expect(await cursorStore.isAcknowledged(cursorId, [pos(1, 0), pos(1, 5), pos(2, 3)])).toEqual([
        false,
        false,
        false,
      ]);
      await cursorStore.create(cursorId, Position.beforeFirst(1n));
      expect(await cursorStore.load(cursorId)).toEqual({
        markDeletePosition: Position.beforeFirst(1n),
        acknowledged: [],
      });
    });

    it('ids above 2^53 round trip exactly', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      // 2^53 + 1: through a JS number it would come back as ...992.
      const ledgerId = 9_007_199_254_740_993n;
      const markDelete = pos(ledgerId, 9_007_199_254_740_993n);
      const acknowledged = [
        pos(ledgerId, 9_007_199_254_740_995n),
        pos(ledgerId + 2n, 0),
        pos(ledgerId + 2n, 1),
      ];
      await cursorStore.create(cursorId, markDelete);

      await cursorStore.acknowledge(cursorId, acknowledged);

      const loaded = await cursorStore.load(cursorId);
      expect(loaded?.markDeletePosition.toString()).toBe('9007199254740993:9007199254740993');
      expect(texts(loaded?.acknowledged)).toEqual([
        '9007199254740993:9007199254740995',
        '9007199254740995:0',
        '9007199254740995:1',
      ]);
      expect(
        await cursorStore.isAcknowledged(cursorId, [
          pos(ledgerId, 9_007_199_254_740_994n),
          pos(ledgerId, 9_007_199_254_740_995n),
          pos(ledgerId + 2n, 1),
        ]),
      ).toEqual([false, true, true]);
    });

    it("ids up to 2^63-1 (Pulsar's long) round trip exactly and in order", async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(MAX_ID));
      const acknowledged = [pos(MAX_ID, MAX_ID), pos(MAX_ID, 1_000_000_000_000_000_000n), pos(MAX_ID, 0)];

      await cursorStore.acknowledge(cursorId, acknowledged);

      const loaded = await cursorStore.load(cursorId);
      expect(texts(loaded?.acknowledged)).toEqual([
        '9223372036854775807:0',
        '9223372036854775807:1000000000000000000',
        '9223372036854775807:9223372036854775807',
      ]);
    });

    it('markDelete with entry ids near 2^63-1 keeps every ack after it', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(MAX_ID));
      await cursorStore.acknowledge(cursorId, [pos(MAX_ID, MAX_ID), pos(MAX_ID, 5_000_000_000_000_000_000n)]);

      await cursorStore.markDelete(cursorId, pos(MAX_ID, 1_000_000_000_000_000_000n));

      const loaded = await cursorStore.load(cursorId);
      expect(texts(loaded?.acknowledged)).toEqual([
        '9223372036854775807:5000000000000000000',
        '9223372036854775807:9223372036854775807',
      ]);
    });

    it('16 concurrent writers acknowledging interleaved neighbours of one cursor lose nothing', async () => {
      const { cursorStore } = storage();
      const cursorId = uniqueId('cursor');
      await cursorStore.create(cursorId, Position.beforeFirst(11n));
      const positions = Array.from({ length: 2_000 }, (_, entryId) => pos(11, entryId));
      const writers = 16;

      // Writer w acknowledges the entries with entryId % 16 == w, five per call: every ack page
      // is written by all sixteen writers at once.
      await Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          const slice = positions.filter((p) => p.entryId % BigInt(writers) === BigInt(writer));
          for (let i = 0; i < slice.length; i += 5) {
            await cursorStore.acknowledge(cursorId, slice.slice(i, i + 5));
          }
        }),
      );

      const loaded = await cursorStore.load(cursorId);
      expect(loaded?.acknowledged).toHaveLength(2_000);
      expect(texts(loaded?.acknowledged)).toEqual(texts(positions));
    });

    describe('deliveryState', () => {
      const readings = [
        ['reading mark-delete', undefined],
        ['with individualAcksOnly', { individualAcksOnly: true }],
      ] as const;
      const acked = { acknowledged: true, redeliveryCount: 0 };
      const unacked = (redeliveryCount = 0) => ({ acknowledged: false, redeliveryCount });

      it.each(
        readings,
      )('%s: acknowledged at or before mark-delete and for acks after it; the highest redelivery count otherwise', async (_, options) => {
        const { cursorStore } = storage();
        const cursorId = uniqueId('cursor');
        await cursorStore.create(cursorId, pos(4, 10));
        await cursorStore.acknowledge(cursorId, [pos(4, 20), pos(5, 300)]);
        await cursorStore.recordRedelivery(cursorId, [
          { position: pos(4, 21), count: 2 },
          { position: pos(4, 22), count: 3 },
        ]);
        await cursorStore.recordRedelivery(cursorId, [{ position: pos(4, 22), count: 1 }]);

        const states = await cursorStore.deliveryState(
          cursorId,
          [
            pos(3, 999),
            pos(4, 5),
            pos(4, 10),
            pos(4, 20),
            pos(4, 21),
            pos(4, 22),
            pos(4, 23),
            pos(5, 299),
            pos(5, 300),
            pos(6, 0),
          ],
          options,
        );

        expect(states).toEqual([
          acked,
          acked,
          acked,
          acked,
          unacked(2),
          unacked(3),
          unacked(),
          unacked(),
          acked,
          unacked(),
        ]);
      });

      it.each(
        readings,
      )('%s: a cursor never created answers unacknowledged, and no positions an empty list', async (_, options) => {
        const { cursorStore } = storage();

        const missing = await cursorStore.deliveryState(
          uniqueId('missing'),
          [pos(1, 0), pos(1, 500)],
          options,
        );
        const none = await cursorStore.deliveryState(uniqueId('missing'), [], options);

        expect(missing).toEqual([unacked(), unacked()]);
        expect(none).toEqual([]);
      });

      // Entries 0..n-1 of a ledger.
      const entries = (ledgerId: number, n: number) => Array.from({ length: n }, (_, i) => pos(ledgerId, i));

      // A fold passes pages whose entries were all acknowledged one by one. A late duplicate ack
      // or a redelivery record on such a page must not make its other entries unacknowledged
      // again: the check with individualAcksOnly reads that page alone.
      it.each([
        {
          name: 'a short fold within a ledger',
          acknowledged: entries(7, 450),
          markDelete: pos(7, 449),
          late: [pos(7, 5), pos(7, 250)],
          next: pos(7, 450),
        },
        {
          name: 'a fold over more than four pages',
          acknowledged: entries(7, 1250),
          markDelete: pos(7, 1249),
          late: [pos(7, 5), pos(7, 1010)],
          next: pos(7, 1250),
        },
        {
          name: 'a fold across a ledger boundary',
          acknowledged: [...entries(7, 250), ...entries(8, 10)],
          markDelete: pos(8, 9),
          late: [pos(7, 5), pos(7, 210)],
          next: pos(8, 10),
        },
      ])('after $name, a late ack and a redelivery record on folded pages bring none of their entries back', async ({
        acknowledged,
        markDelete,
        late,
        next,
      }) => {
        const { cursorStore } = storage();
        const cursorId = uniqueId('cursor');
        await cursorStore.create(cursorId, Position.beforeFirst(7n));
        await cursorStore.acknowledge(cursorId, acknowledged);
        await cursorStore.markDelete(cursorId, markDelete);
        const [lateAck, lateRedelivery] = late as [Position, Position];

        await cursorStore.acknowledge(cursorId, [lateAck]);
        await cursorStore.recordRedelivery(cursorId, [{ position: lateRedelivery, count: 1 }]);

        const neighbours = [lateAck, lateRedelivery].map((p) => pos(p.ledgerId, p.entryId + 1n));
        const states = await cursorStore.deliveryState(
          cursorId,
          [...neighbours, lateAck, lateRedelivery, markDelete, next],
          { individualAcksOnly: true },
        );
        expect(states).toEqual([acked, acked, acked, acked, acked, unacked()]);
        const loaded = await cursorStore.load(cursorId);
        expect(loaded?.markDeletePosition).toEqual(markDelete);
        expect(loaded?.acknowledged.filter((p) => p.compareTo(markDelete) > 0)).toEqual([]);
      });

      it('a cursor created inside an ack page (Latest) keeps the entries before it acknowledged when that page is written later', async () => {
        const { cursorStore } = storage();
        const cursorId = uniqueId('cursor');
        await cursorStore.create(cursorId, pos(9, 250));

        await cursorStore.recordRedelivery(cursorId, [{ position: pos(9, 260), count: 1 }]);
        await cursorStore.acknowledge(cursorId, [pos(9, 270)]);

        // Positions of page 9:200..9:399 only: the page exists, so the check does not read the head.
        const states = await cursorStore.deliveryState(
          cursorId,
          [pos(9, 200), pos(9, 240), pos(9, 250), pos(9, 251), pos(9, 260), pos(9, 270)],
          { individualAcksOnly: true },
        );
        expect(states).toEqual([acked, acked, acked, unacked(), unacked(1), acked]);
      });

      it('with individualAcksOnly, a position whose ack page does not exist is answered by mark-delete', async () => {
        const { cursorStore } = storage();
        const cursorId = uniqueId('cursor');
        await cursorStore.create(cursorId, Position.beforeFirst(12n));
        // Moved without individual acks (as a cumulative ack does): no page of 12:0..12:999 exists.
        await cursorStore.markDelete(cursorId, pos(12, 999));
        await cursorStore.acknowledge(cursorId, [pos(12, 1005)]);

        const states = await cursorStore.deliveryState(
          cursorId,
          [pos(12, 500), pos(12, 999), pos(12, 1000), pos(12, 1005), pos(12, 1500)],
          { individualAcksOnly: true },
        );

        expect(states).toEqual([acked, acked, unacked(), acked, unacked()]);
      });
    });
  });

  describe('DispatchStore', () => {
    const T0 = 1_700_000_000_000;
    const held = (
      ledgerId: bigint,
      entryId: bigint,
      n: number,
      fields: Partial<HeldFields> = {},
    ): DeliveryRun => ({
      ledgerId,
      entryId,
      n,
      deliveries: fields.deliveries ?? 1,
      state: {
        kind: 'held',
        consumerId: fields.consumerId ?? 'consumer-a',
        deliveredAtMs: fields.deliveredAtMs ?? T0,
        ...(fields.timeoutAtMs !== undefined ? { timeoutAtMs: fields.timeoutAtMs } : {}),
      },
    });
    const released = (
      ledgerId: bigint,
      entryId: bigint,
      n: number,
      { dueAtMs, deliveries = 1 }: ReleasedFields,
    ): DeliveryRun => ({
      ledgerId,
      entryId,
      n,
      deliveries,
      state: { kind: 'released', dueAtMs },
    });
    const tracker = (dueAtMs: number, position: Position, deliveries = 1, n = 1): TrackerEntry => ({
      dueAtMs,
      position,
      deliveries,
      n,
    });
    const headAt = (ledgerId: bigint, fields: Partial<DispatchHead> = {}): DispatchHead => ({
      ...newDispatchHead(Position.beforeFirst(ledgerId), pos(ledgerId, 0)),
      ...fields,
    });
    const ref = (ledgerId: bigint, page: bigint): PageRef => ({ ledgerId, page });
    const acked = (pages: readonly PageState[]): number[][] =>
      pages.map((page) => [...page.acked].sort((a, b) => a - b));

    describe('head', () => {
      it('createHead creates once: a second create gives false and leaves the first head', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const first = headAt(3n);

        const created = await dispatchStore.createHead(cursorId, first);
        const again = await dispatchStore.createHead(cursorId, headAt(4n, { epoch: 9 }));

        expect(created).toBe(true);
        expect(again).toBe(false);
        expect(await dispatchStore.readHead(cursorId)).toEqual({ head: first, version: 1 });
      });

      it('readHead gives back every field of the head, and undefined for a cursor never created', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const head: DispatchHead = {
          markDelete: pos(7, 41),
          readPosition: pos(8, 3),
          runs: [
            held(7n, 42n, 10, { consumerId: 'c-1', deliveredAtMs: T0 + 1, timeoutAtMs: T0 + 30_000 }),
            released(7n, 52n, 5, { dueAtMs: T0 + 5_000, deliveries: 2 }),
            held(8n, 0n, 3, { consumerId: 'c-2', deliveries: 4 }),
          ],
          trackerDueAtMs: T0 + 5_000,
          epoch: 3,
          owner: { consumerId: 'c-1', leaseUntilMs: T0 + 60_000 },
          replayFrom: pos(7, 42),
          routedAtMs: T0 + 7,
          fenced: ['c-0', 'c-old'],
        };

        await dispatchStore.createHead(cursorId, head);
        const read = await dispatchStore.readHead(cursorId);

        expect(read).toEqual({ head, version: 1 });
        expect(read?.head.markDelete.toString()).toBe('7:41');
        expect(await dispatchStore.readHead(uniqueId('missing'))).toBeUndefined();
      });

      it('a mark-delete before the first entry (L:-1) round trips', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');

        await dispatchStore.createHead(cursorId, headAt(12n));
        const read = await dispatchStore.readHead(cursorId);

        expect(read?.head.markDelete.isBeforeFirst).toBe(true);
        expect(read?.head.markDelete.toString()).toBe('12:-1');
      });

      it('casHead replaces the head at the expected version and counts the version up', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.createHead(cursorId, headAt(3n));
        const next = headAt(3n, { readPosition: pos(3, 10), runs: [held(3n, 0n, 10)] });

        const outcome = await dispatchStore.casHead(cursorId, 1, next);

        expect(outcome).toEqual({ ok: true });
        expect(await dispatchStore.readHead(cursorId)).toEqual({ head: next, version: 2 });
      });

      it('casHead at a stale version writes nothing and gives the current head', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.createHead(cursorId, headAt(3n));
        const current = headAt(3n, { readPosition: pos(3, 5), epoch: 1 });
        await dispatchStore.casHead(cursorId, 1, current);
        await dispatchStore.raiseAheadAck(cursorId, pos(3, 8));

        const outcome = await dispatchStore.casHead(cursorId, 1, headAt(3n, { epoch: 7 }));

        // The raise counted as a version: 1 created, 2 the compare-and-set, 3 the raise.
        expect(outcome).toEqual({ ok: false, current: { head: current, version: 3, aheadAck: pos(3, 8) } });
        expect(await dispatchStore.readHead(cursorId)).toEqual({
          head: current,
          version: 3,
          aheadAck: pos(3, 8),
        });
      });

      it('casHead retried by the SDK after its applied first attempt timed out answers success', async () => {
        const stores = storage();
        const { dispatchStore } = stores;
        const cursorId = uniqueId('dispatch');
        await dispatchStore.createHead(cursorId, headAt(3n));
        const next = headAt(3n, { readPosition: pos(3, 10), runs: [held(3n, 0n, 10)] });

        const outcome = await retriedAfterTimeout(stores, () => dispatchStore.casHead(cursorId, 1, next));

        expect(outcome).toEqual({ ok: true });
        expect(await dispatchStore.readHead(cursorId)).toEqual({ head: next, version: 2 });
        // Another request writing an equal head from the same version is no retry: refused.
        expect((await dispatchStore.casHead(cursorId, 1, { ...next })).ok).toBe(false);
      });

      it('casHead on a cursor never created fails with no current head and creates none', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('missing');

        const outcome = await dispatchStore.casHead(cursorId, 0, headAt(3n));

        expect(outcome).toEqual({ ok: false, current: undefined });
        expect(await dispatchStore.readHead(cursorId)).toBeUndefined();
      });

      it('casHead keeps the early-ack mark', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.createHead(cursorId, headAt(3n));
        await dispatchStore.raiseAheadAck(cursorId, pos(3, 40));

        await dispatchStore.casHead(cursorId, 1, headAt(3n, { readPosition: pos(3, 20) }));
        await dispatchStore.casHead(cursorId, 2, headAt(3n, { readPosition: pos(3, 30) }));

        expect(await dispatchStore.readHead(cursorId)).toEqual({
          head: headAt(3n, { readPosition: pos(3, 30) }),
          version: 3,
          aheadAck: pos(3, 40),
        });
      });

      it('raiseAheadAck only raises the mark (and the version with it), in position order across ledgers, and needs a head', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const missing = uniqueId('missing');
        await dispatchStore.createHead(cursorId, headAt(3n));
        const marks: (Position | undefined)[] = [];

        for (const position of [pos(3, 99), pos(3, 100), pos(3, 7), pos(4, 0), pos(3, 1000), pos(4, 0)]) {
          await dispatchStore.raiseAheadAck(cursorId, position);
          marks.push((await dispatchStore.readHead(cursorId))?.aheadAck);
        }
        await dispatchStore.raiseAheadAck(missing, pos(3, 1));

        expect(marks.map(String)).toEqual(['3:99', '3:100', '3:100', '4:0', '4:0', '4:0']);
        // Three raises took (3:99, 3:100, 4:0): a claim on a head read before any of them fails.
        expect((await dispatchStore.readHead(cursorId))?.version).toBe(4);
        expect(await dispatchStore.readHead(missing)).toBeUndefined();
      });
    });

    describe('pages', () => {
      it('acknowledge adds offsets to their pages; readPages gives them in the order asked, empty for pages never written', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');

        await dispatchStore.acknowledge(cursorId, [
          pos(5, 98),
          pos(5, 99),
          pos(5, 100),
          pos(5, 205),
          pos(6, 3),
        ]);
        const pages = await dispatchStore.readPages(cursorId, [
          ref(5n, 2n),
          ref(5n, 0n),
          ref(5n, 1n),
          ref(5n, 3n),
          ref(6n, 0n),
        ]);

        expect(pages).toEqual([
          { ledgerId: 5n, page: 2n, acked: new Set([5]), runs: [], version: 0 },
          { ledgerId: 5n, page: 0n, acked: new Set([98, 99]), runs: [], version: 0 },
          { ledgerId: 5n, page: 1n, acked: new Set([0]), runs: [], version: 0 },
          { ledgerId: 5n, page: 3n, acked: new Set(), runs: [], version: 0 },
          { ledgerId: 6n, page: 0n, acked: new Set([3]), runs: [], version: 0 },
        ]);
      });

      it('readPages of no page gives none, and of one page twice gives it twice', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.acknowledge(cursorId, [pos(5, 1)]);

        const none = await dispatchStore.readPages(cursorId, []);
        const twice = await dispatchStore.readPages(cursorId, [ref(5n, 0n), ref(5n, 0n)]);

        expect(none).toEqual([]);
        expect(acked(twice)).toEqual([[1], [1]]);
      });

      it('acknowledge is idempotent', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');

        await dispatchStore.acknowledge(cursorId, [pos(5, 10), pos(5, 11)]);
        await dispatchStore.acknowledge(cursorId, [pos(5, 11), pos(5, 10), pos(5, 11)]);

        expect(acked(await dispatchStore.readPages(cursorId, [ref(5n, 0n)]))).toEqual([[10, 11]]);
      });

      it('16 concurrent acknowledges of neighbouring offsets lose none', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const offsets = Array.from({ length: 16 }, (_, i) => 40 + i);

        await Promise.all(offsets.map((offset) => dispatchStore.acknowledge(cursorId, [pos(5, offset)])));

        expect(acked(await dispatchStore.readPages(cursorId, [ref(5n, 0n)]))).toEqual([offsets]);
      });

      it('casPage at version 0 on a page holding only acks writes its runs and keeps the acks', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.acknowledge(cursorId, [pos(5, 102), pos(5, 150)]);
        const runs = [held(5n, 100n, 10), released(5n, 150n, 20, { dueAtMs: T0 + 3_000, deliveries: 2 })];

        const written = await dispatchStore.casPage(cursorId, ref(5n, 1n), 0, { runs });
        const [page] = await dispatchStore.readPages(cursorId, [ref(5n, 1n)]);

        expect(written).toBe(true);
        expect(page).toEqual({ ledgerId: 5n, page: 1n, acked: new Set([2, 50]), runs, version: 1 });
      });

      it('casPage retried by the SDK after its applied first attempt timed out answers success', async () => {
        const stores = storage();
        const { dispatchStore } = stores;
        const cursorId = uniqueId('dispatch');
        const next = { runs: [held(5n, 100n, 3)] };

        expect(
          await retriedAfterTimeout(stores, () => dispatchStore.casPage(cursorId, ref(5n, 1n), 0, next)),
        ).toBe(true);
        const [page] = await dispatchStore.readPages(cursorId, [ref(5n, 1n)]);
        expect(page?.version).toBe(1);
        expect(await dispatchStore.casPage(cursorId, ref(5n, 1n), 0, { runs: [held(5n, 100n, 3)] })).toBe(
          false,
        );
      });

      it('casPage on a page never written creates it at version 1, and the next at version 2', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const first = [held(5n, 0n, 10)];
        const second = [held(5n, 0n, 10), held(5n, 10n, 10, { consumerId: 'consumer-b' })];

        const created = await dispatchStore.casPage(cursorId, ref(5n, 0n), 0, { runs: first });
        const updated = await dispatchStore.casPage(cursorId, ref(5n, 0n), 1, { runs: second });
        const [page] = await dispatchStore.readPages(cursorId, [ref(5n, 0n)]);

        expect([created, updated]).toEqual([true, true]);
        expect(page).toEqual({ ledgerId: 5n, page: 0n, acked: new Set(), runs: second, version: 2 });
      });

      it('casPage with clearAcks and a floor drops the acks and sets the floor; a later casPage without floor keeps it', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.acknowledge(cursorId, [pos(5, 0), pos(5, 1), pos(5, 99)]);
        await dispatchStore.casPage(cursorId, ref(5n, 0n), 0, { runs: [held(5n, 2n, 97)] });

        const tombstoned = await dispatchStore.casPage(cursorId, ref(5n, 0n), 1, {
          runs: [],
          floor: 99,
          clearAcks: true,
        });
        const [tombstone] = await dispatchStore.readPages(cursorId, [ref(5n, 0n)]);
        await dispatchStore.casPage(cursorId, ref(5n, 0n), 2, { runs: [] });
        const [later] = await dispatchStore.readPages(cursorId, [ref(5n, 0n)]);

        expect(tombstoned).toBe(true);
        expect(tombstone).toEqual({
          ledgerId: 5n,
          page: 0n,
          acked: new Set(),
          runs: [],
          floor: 99,
          version: 2,
        });
        expect(later).toEqual({ ledgerId: 5n, page: 0n, acked: new Set(), runs: [], floor: 99, version: 3 });
      });

      it('casPage with a floor and no clearAcks keeps the acks', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.acknowledge(cursorId, [pos(5, 70)]);

        await dispatchStore.casPage(cursorId, ref(5n, 0n), 0, { runs: [], floor: 49 });
        const [page] = await dispatchStore.readPages(cursorId, [ref(5n, 0n)]);

        expect(page).toEqual({
          ledgerId: 5n,
          page: 0n,
          acked: new Set([70]),
          runs: [],
          floor: 49,
          version: 1,
        });
      });

      it.each([
        ['a page never written, expecting version 1', [] as number[], 1],
        ['a page holding only acks, expecting version 1', [3], 1],
        ['a written page (version 1), expecting version 0', [3], 0, true],
        ['a written page (version 1), expecting version 2', [3], 2, true],
      ])('casPage on %s fails and writes nothing', async (_, ackOffsets, expected, writtenFirst = false) => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.acknowledge(
          cursorId,
          ackOffsets.map((offset) => pos(5, offset)),
        );
        if (writtenFirst) await dispatchStore.casPage(cursorId, ref(5n, 0n), 0, { runs: [held(5n, 0n, 1)] });
        const [before] = await dispatchStore.readPages(cursorId, [ref(5n, 0n)]);

        const written = await dispatchStore.casPage(cursorId, ref(5n, 0n), expected, {
          runs: [released(5n, 9n, 1, { dueAtMs: T0 })],
          floor: 99,
          clearAcks: true,
        });

        expect(written).toBe(false);
        expect(await dispatchStore.readPages(cursorId, [ref(5n, 0n)])).toEqual([before]);
      });

      it('runs of every kind round trip through a page, large ids included', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const ledgerId = MAX_ID;
        const page = MAX_ID / 100n;
        const first = page * 100n;
        const runs = [
          held(ledgerId, first, 2, { consumerId: 'c#1:x', deliveredAtMs: T0, timeoutAtMs: T0 + 1 }),
          held(ledgerId, first + 2n, 3, { deliveries: 7 }),
          released(ledgerId, first + 5n, 2, { dueAtMs: T0 + 10, deliveries: 0 }),
        ];

        await dispatchStore.acknowledge(cursorId, [Position.of(ledgerId, MAX_ID)]);
        await dispatchStore.casPage(cursorId, ref(ledgerId, page), 0, { runs });
        const [read] = await dispatchStore.readPages(cursorId, [ref(ledgerId, page)]);

        expect(read).toEqual({ ledgerId, page, acked: new Set([Number(MAX_ID % 100n)]), runs, version: 1 });
      });
    });

    describe('redelivery tracker', () => {
      it('dueTracker gives the entries due by now, by due time then position across ledgers, at most `limit`', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const entries = [
          tracker(T0 + 20, pos(3, 5)),
          tracker(T0 + 10, pos(4, 0), 2, 10),
          tracker(T0 + 10, pos(3, 900), 1, 100),
          tracker(T0 + 10, pos(3, 10)),
          tracker(T0 + 30, pos(1, 0)),
          tracker(T0 + 31, pos(1, 1)),
        ];

        await dispatchStore.putTracker(cursorId, entries);
        const due = await dispatchStore.dueTracker(cursorId, T0 + 30, 10);
        const first = await dispatchStore.dueTracker(cursorId, T0 + 30, 2);
        const none = await dispatchStore.dueTracker(cursorId, T0 + 9, 10);

        expect(due).toEqual([entries[3], entries[2], entries[1], entries[0], entries[4]]);
        expect(first).toEqual([entries[3], entries[2]]);
        expect(none).toEqual([]);
      });

      it('putting one entry twice makes one entry; entries differing only in n or deliveries are two', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const entry = tracker(T0, pos(3, 5), 1, 10);

        await dispatchStore.putTracker(cursorId, [entry]);
        await dispatchStore.putTracker(cursorId, [entry, { ...entry }]);
        await dispatchStore.putTracker(cursorId, [
          tracker(T0, pos(3, 5), 1, 4),
          tracker(T0, pos(3, 5), 2, 10),
        ]);

        expect(await dispatchStore.dueTracker(cursorId, T0, 10)).toEqual([
          tracker(T0, pos(3, 5), 1, 10),
          tracker(T0, pos(3, 5), 1, 4),
          tracker(T0, pos(3, 5), 2, 10),
        ]);
      });

      it('an entry keeps the last holder it was put with (not part of the key: putting it again replaces it)', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const named = { ...tracker(T0, pos(3, 5), 1, 2), consumerId: 'AbCdEfGhIjKlMnOpQrStUv' };
        const plain = tracker(T0, pos(3, 7));

        await dispatchStore.putTracker(cursorId, [named, plain]);
        const first = await dispatchStore.dueTracker(cursorId, T0, 10);
        await dispatchStore.putTracker(cursorId, [{ ...named, consumerId: 'other' }]);

        expect(first).toEqual([named, plain]);
        expect(await dispatchStore.dueTracker(cursorId, T0, 10)).toEqual([
          { ...named, consumerId: 'other' },
          plain,
        ]);
      });

      it('dueTracker after an entry gives the next page in the same order, also after an entry since deleted', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const entries = Array.from({ length: 25 }, (_, i) =>
          tracker(T0 + (i % 4) * 10, pos(3 + (i % 2), i), 1 + (i % 3), 1 + (i % 11)),
        );
        await dispatchStore.putTracker(cursorId, [...entries, tracker(T0 + 500, pos(3, 99))]);
        const all = await dispatchStore.dueTracker(cursorId, T0 + 100, 100);
        expect(all).toHaveLength(25);

        const paged: (typeof all)[number][] = [];
        let page = await dispatchStore.dueTracker(cursorId, T0 + 100, 10);
        while (page.length > 0) {
          paged.push(...page);
          page = await dispatchStore.dueTracker(cursorId, T0 + 100, 10, { after: page[page.length - 1]! });
        }
        expect(paged).toEqual(all);

        await dispatchStore.deleteTracker(cursorId, [all[9]!]);
        expect(await dispatchStore.dueTracker(cursorId, T0 + 100, 10, { after: all[9]! })).toEqual(
          all.slice(10, 20),
        );
        expect(await dispatchStore.dueTracker(cursorId, T0 + 100, 10, { after: all[24]! })).toEqual([]);
      });

      it('putTracker and deleteTracker take more entries than one batch request holds', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const entries = Array.from({ length: 60 }, (_, i) => tracker(T0 + i, pos(3, i)));

        await dispatchStore.putTracker(cursorId, entries);
        const put = await dispatchStore.dueTracker(cursorId, T0 + 100, 100);
        await dispatchStore.deleteTracker(cursorId, entries.slice(0, 55));
        const left = await dispatchStore.dueTracker(cursorId, T0 + 100, 100);

        expect(put).toEqual(entries);
        expect(left).toEqual(entries.slice(55));
      });

      it('nextTrackerDue gives the earliest due time after `afterMs` (-1: the earliest of all)', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.putTracker(cursorId, [
          tracker(T0 + 50, pos(3, 1)),
          tracker(T0 + 20, pos(9, 9)),
          tracker(T0 + 20, pos(2, 0)),
          tracker(0, pos(2, 5)),
        ]);

        expect(await dispatchStore.nextTrackerDue(cursorId, -1)).toBe(0);
        expect(await dispatchStore.nextTrackerDue(cursorId, 0)).toBe(T0 + 20);
        expect(await dispatchStore.nextTrackerDue(cursorId, T0 + 19)).toBe(T0 + 20);
        expect(await dispatchStore.nextTrackerDue(cursorId, T0 + 20)).toBe(T0 + 50);
        expect(await dispatchStore.nextTrackerDue(cursorId, T0 + 50)).toBeUndefined();
        expect(await dispatchStore.nextTrackerDue(uniqueId('missing'), -1)).toBeUndefined();
      });

      it('deleteTracker removes exactly the entries named, and one never put is no error', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        const kept = tracker(T0, pos(3, 5), 1, 4);
        const removed = tracker(T0, pos(3, 5), 1, 10);
        await dispatchStore.putTracker(cursorId, [kept, removed]);

        await dispatchStore.deleteTracker(cursorId, [removed, removed, tracker(T0 + 1, pos(3, 6))]);

        expect(await dispatchStore.dueTracker(cursorId, T0 + 1, 10)).toEqual([kept]);
        expect(await dispatchStore.nextTrackerDue(cursorId, -1)).toBe(T0);
      });

      it('tracker entries and pages do not show in each other', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.createHead(cursorId, headAt(3n));
        await dispatchStore.acknowledge(cursorId, [pos(3, 1)]);
        await dispatchStore.casPage(cursorId, ref(3n, 0n), 0, { runs: [held(3n, 0n, 5)] });

        expect(await dispatchStore.dueTracker(cursorId, Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
        expect(await dispatchStore.nextTrackerDue(cursorId, -1)).toBeUndefined();
      });
    });

    describe('delivery counters and last acknowledgements', () => {
      it('addToCounters adds commutatively and keeps rate snapshots, renewed by the first addition of a minute', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.createHead(cursorId, headAt(3n));
        expect(await dispatchStore.readCounters(cursorId)).toEqual({});

        await dispatchStore.addToCounters(cursorId, { out: { count: 3, bytes: 30 } }, T0);
        await Promise.all(
          [1, 2, 3, 4].map((i) =>
            dispatchStore.addToCounters(
              cursorId,
              { out: { count: 1, bytes: 10 }, redelivered: { count: 1, bytes: 10 } },
              T0 + 1_000 * i,
            ),
          ),
        );
        const early = await dispatchStore.readCounters(cursorId);
        expect(early.out).toMatchObject({ count: 7, bytes: 70, snapshot: { atMs: T0, count: 0, bytes: 0 } });
        expect(early.out?.previous).toBeUndefined();
        expect(early.redelivered).toMatchObject({ count: 4, bytes: 40 });
        expect(early.redelivered?.snapshot.count).toBe(0);

        await dispatchStore.addToCounters(cursorId, { out: { count: 2, bytes: 20 } }, T0 + 61_000);
        const later = await dispatchStore.readCounters(cursorId);
        expect(later.out).toEqual({
          count: 9,
          bytes: 90,
          lastAtMs: T0 + 61_000,
          snapshot: { atMs: T0 + 61_000, count: 7, bytes: 70 },
          previous: { atMs: T0, count: 0, bytes: 0 },
        });
        expect(later.redelivered).toEqual(early.redelivered);
      });

      it('acknowledge with a time records it on each page it touches; the counters item is none of the pages', async () => {
        const { dispatchStore } = storage();
        const cursorId = uniqueId('dispatch');
        await dispatchStore.createHead(cursorId, headAt(3n));
        await dispatchStore.acknowledge(cursorId, [pos(3, 1), pos(3, 150)], T0 + 5);
        await dispatchStore.acknowledge(cursorId, [pos(3, 2)]);
        await dispatchStore.addToCounters(cursorId, { out: { count: 1, bytes: 1 } }, T0);
        const pages = await dispatchStore.readPages(cursorId, [ref(3n, 0n), ref(3n, 1n), ref(3n, 2n)]);
        expect(pages.map((page) => page.lastAckedAtMs)).toEqual([T0 + 5, T0 + 5, undefined]);
        expect(acked(pages)).toEqual([[1, 2], [50], []]);
        expect(await dispatchStore.dueTracker(cursorId, Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
        await dispatchStore.deleteCursor(cursorId);
        expect(await dispatchStore.readCounters(cursorId)).toEqual({});
      });
    });

    it('deletePages deletes the pages named (acks, runs, floor) and no other; a page never written is no error', async () => {
      const { dispatchStore } = storage();
      const cursorId = uniqueId('dispatch');
      await dispatchStore.createHead(cursorId, headAt(3n));
      await dispatchStore.acknowledge(cursorId, [pos(3, 1), pos(3, 150), pos(3, 250)]);
      await dispatchStore.casPage(cursorId, ref(3n, 1n), 0, { runs: [held(3n, 100n, 5)], floor: 99 });

      await dispatchStore.deletePages(cursorId, [ref(3n, 0n), ref(3n, 1n), ref(3n, 7n)]);

      const pages = await dispatchStore.readPages(cursorId, [ref(3n, 0n), ref(3n, 1n), ref(3n, 2n)]);
      expect(pages.slice(0, 2)).toEqual([
        { ledgerId: 3n, page: 0n, acked: new Set(), runs: [], version: 0 },
        { ledgerId: 3n, page: 1n, acked: new Set(), runs: [], version: 0 },
      ]);
      expect(acked(pages)).toEqual([[], [], [50]]);
      expect(await dispatchStore.readHead(cursorId)).toBeDefined();
    });

    it.each([
      ['deleteCursor', false],
      ['purgeCursor, two items a call', true],
    ])('%s removes the head, the pages and the tracker of that cursor only', async (_, paged) => {
      const { dispatchStore } = storage();
      const [deleted, kept] = [uniqueId('dispatch'), uniqueId('dispatch')];
      for (const cursorId of [deleted, kept]) {
        await dispatchStore.createHead(cursorId, headAt(3n));
        await dispatchStore.raiseAheadAck(cursorId, pos(3, 500));
        await dispatchStore.acknowledge(cursorId, [pos(3, 1), pos(3, 250)]);
        await dispatchStore.casPage(cursorId, ref(3n, 0n), 0, { runs: [held(3n, 0n, 5)] });
        await dispatchStore.putTracker(cursorId, [tracker(T0, pos(3, 0)), tracker(T0 + 5, pos(3, 2))]);
      }
      const keptBefore = {
        head: await dispatchStore.readHead(kept),
        pages: await dispatchStore.readPages(kept, [ref(3n, 0n), ref(3n, 2n)]),
        tracker: await dispatchStore.dueTracker(kept, T0 + 5, 10),
      };

      if (paged) {
        let calls = 0;
        while (await dispatchStore.purgeCursor(deleted, 2)) calls++;
        expect(calls).toBeGreaterThan(0);
      } else {
        await dispatchStore.deleteCursor(deleted);
      }

      expect(await dispatchStore.readHead(deleted)).toBeUndefined();
      expect(await dispatchStore.readPages(deleted, [ref(3n, 0n), ref(3n, 2n)])).toEqual([
        { ledgerId: 3n, page: 0n, acked: new Set(), runs: [], version: 0 },
        { ledgerId: 3n, page: 2n, acked: new Set(), runs: [], version: 0 },
      ]);
      expect(await dispatchStore.nextTrackerDue(deleted, -1)).toBeUndefined();
      expect({
        head: await dispatchStore.readHead(kept),
        pages: await dispatchStore.readPages(kept, [ref(3n, 0n), ref(3n, 2n)]),
        tracker: await dispatchStore.dueTracker(kept, T0 + 5, 10),
      }).toEqual(keptBefore);
      expect(keptBefore.tracker).toHaveLength(2);
      expect(acked(keptBefore.pages)).toEqual([[1], [50]]);
    });
  });

  describe('PolicyStore', () => {
    it('sets, reads and removes retention and message TTL per scope, field by field', async () => {
      const { policyStore } = storage();
      const namespace = { namespace: uniqueId('tenant/ns') };
      const topic = { topic: `persistent://${uniqueId('t')}/ns/topic` };
      expect(await policyStore.get(namespace)).toBeUndefined();

      await policyStore.update(namespace, {
        retention: { retentionTimeInMinutes: 60, retentionSizeInMB: -1 },
      });
      await policyStore.update(namespace, { messageTTLInSeconds: 30 });
      await policyStore.update(topic, { messageTTLInSeconds: 0 });

      expect(await policyStore.get(namespace)).toEqual({
        retention: { retentionTimeInMinutes: 60, retentionSizeInMB: -1 },
        messageTTLInSeconds: 30,
      });
      expect(await policyStore.get(topic)).toEqual({ messageTTLInSeconds: 0 });
      await policyStore.update(namespace, { retention: null });
      expect(await policyStore.get(namespace)).toEqual({ messageTTLInSeconds: 30 });
      await policyStore.update(namespace, { messageTTLInSeconds: null });
      expect(await policyStore.get(namespace)).toBeUndefined();
    });

    it('sets, reads and removes the subscription limits; REMOVE_ALL_POLICIES leaves nothing', async () => {
      const { policyStore } = storage();
      const topic = { topic: `persistent://${uniqueId('t')}/ns/limited` };
      await policyStore.update(topic, { maxSubscriptionsPerTopic: 2, maxConsumersPerSubscription: 0 });
      await policyStore.update(topic, { messageTTLInSeconds: 5 });
      expect(await policyStore.get(topic)).toEqual({
        messageTTLInSeconds: 5,
        maxSubscriptionsPerTopic: 2,
        maxConsumersPerSubscription: 0,
      });
      await policyStore.update(topic, { maxSubscriptionsPerTopic: null });
      expect(await policyStore.get(topic)).toEqual({
        messageTTLInSeconds: 5,
        maxConsumersPerSubscription: 0,
      });
      await policyStore.update(topic, REMOVE_ALL_POLICIES);
      expect(await policyStore.get(topic)).toBeUndefined();
    });

    it('lists every scope that sets a policy, and none whose policies were all removed', async () => {
      const { policyStore } = storage();
      const namespace = { namespace: uniqueId('tenant/ns') };
      const cleared = { namespace: uniqueId('tenant/cleared') };
      const topic = { topic: `persistent://${uniqueId('t')}/ns/topic` };
      await policyStore.update(namespace, { retention: { retentionTimeInMinutes: 5, retentionSizeInMB: 1 } });
      await policyStore.update(topic, { messageTTLInSeconds: 60 });
      await policyStore.update(cleared, { messageTTLInSeconds: 60 });
      await policyStore.update(cleared, { messageTTLInSeconds: null });

      // The store is shared by the suite: look at this test's scopes only.
      const mine = (await policyStore.list()).filter(({ scope }) =>
        [namespace, cleared, topic].some((own) => JSON.stringify(own) === JSON.stringify(scope)),
      );

      expect(mine).toEqual(
        expect.arrayContaining([
          { scope: namespace, policies: { retention: { retentionTimeInMinutes: 5, retentionSizeInMB: 1 } } },
          { scope: topic, policies: { messageTTLInSeconds: 60 } },
        ]),
      );
      expect(mine).toHaveLength(2);
    });
  });

  describe('HandleKeyStore', () => {
    it('makes one key on the first call ever; every store over the storage returns it, racing first calls too', async () => {
      const { handleKeyStore } = storage();

      const racing = await Promise.all(Array.from({ length: 8 }, () => handleKeyStore().loadOrCreate()));
      const later = await handleKeyStore().loadOrCreate();

      expect(racing[0]).toHaveLength(32);
      expect(new Set([...racing, later].map((key) => Buffer.from(key).toString('hex'))).size).toBe(1);
    });
  });

  describe('ConsumerRegistry', () => {
    it("keeps each member's lease: the members are the live ones, the expired the others, leave removes one", async () => {
      const { consumerRegistry: registry } = storage();
      const key = JSON.stringify([`persistent://${uniqueNamespace()}/orders`, 'sub']);
      await registry.heartbeat(key, 'b', 50_000);
      await registry.heartbeat(key, 'a', 60_000);
      await registry.heartbeat(key, 'a', 70_000);
      expect(await registry.leases(key)).toEqual([
        { consumerId: 'a', untilMs: 70_000 },
        { consumerId: 'b', untilMs: 50_000 },
      ]);
      expect(await registry.members(key, 55_000)).toEqual(['a']);
      expect(await registry.expired(key, 55_000)).toEqual(['b']);
      await registry.leave(key, 'a');
      expect(await registry.leases(key)).toEqual([{ consumerId: 'b', untilMs: 50_000 }]);
    });
  });

  describe('Ledger', () => {
    it('initialize creates one empty ledger owned by the partition and is idempotent', async () => {
      const ledger = storage().ledger(5);
      const partition = uniquePartition();

      const first = await ledger.initialize(partition);
      const again = await ledger.initialize(partition);

      expect(again).toEqual(first);
      expect(await ledger.state(partition)).toEqual(first);
      expect(first.partition.toString()).toBe(partition.toString());
      expect(first.ledgers).toHaveLength(1);
      expect(first.ledgers[0]?.entries).toBe(0n);
      expect(first).toMatchObject({ msgInCounter: 0, bytesInCounter: 0 });
      expect(await ledger.ownerOf(first.ledgers[0]!.ledgerId)).toEqual(partition);
    });

    it('concurrent initializes of one partition agree on its first ledger', async () => {
      const ledger = storage().ledger(5);
      const partition = uniquePartition();

      const states = await Promise.all([1, 2, 3, 4].map(() => ledger.initialize(partition)));

      for (const state of states) expect(state).toEqual(states[0]);
      expect(await ledger.state(partition)).toEqual(states[0]);
    });

    it('state of a partition never initialized is undefined', async () => {
      const ledger = storage().ledger(5);

      expect(await ledger.state(uniquePartition())).toBeUndefined();
    });

    it('append returns consecutive positions across calls', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      const { ledgers } = await ledger.initialize(partition);
      const ledgerId = ledgers[0]!.ledgerId;

      const { positions: first } = await ledger.append(partition, [entry('a'), entry('b')], 1);
      const { positions: second } = await ledger.append(partition, [entry('c'), entry('d'), entry('e')], 2);
      const { positions: third } = await ledger.append(partition, [entry('f')], 3);

      expect(texts([...first, ...second, ...third])).toEqual(
        [0, 1, 2, 3, 4, 5].map((entryId) => `${ledgerId}:${entryId}`),
      );
      expect((await ledger.state(partition))?.ledgers).toEqual([{ ledgerId, entries: 6n }]);
    });

    it('append records the producer and keeps a publish rate snapshot, renewed by the first publish of a minute', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      const T = 1_700_000_000_000;
      expect((await ledger.state(partition))?.msgIn).toBeUndefined();

      await ledger.append(partition, [entry('aa'), entry('bb')], T, { producerName: 'orders' });
      await ledger.append(partition, [entry('cc')], T + 30_000, { producerName: 'audit' });
      const early = await ledger.state(partition);
      expect(early?.msgIn).toEqual({
        count: 3,
        bytes: 6,
        lastAtMs: T + 30_000,
        snapshot: { atMs: T, count: 0, bytes: 0 },
      });
      expect(early?.publishers).toEqual([
        { producerName: 'audit', lastPublishAtMs: T + 30_000 },
        { producerName: 'orders', lastPublishAtMs: T },
      ]);

      await ledger.append(partition, [entry('dd')], T + 61_000, { producerName: 'orders' });
      const later = await ledger.state(partition);
      expect(later?.msgIn).toEqual({
        count: 4,
        bytes: 8,
        lastAtMs: T + 61_000,
        snapshot: { atMs: T + 61_000, count: 3, bytes: 6 },
        previous: { atMs: T, count: 0, bytes: 0 },
      });
      expect(later?.publishers).toEqual([
        { producerName: 'orders', lastPublishAtMs: T + 61_000 },
        { producerName: 'audit', lastPublishAtMs: T + 30_000 },
      ]);
    });

    it('trim deletes the batches the retention plan lets go, oldest first, and counts them once', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      const { ledgers } = await ledger.initialize(partition);
      const ledgerId = ledgers[0]!.ledgerId;
      const T = 1_700_000_000_000;
      await ledger.append(partition, [entry('aaaa'), entry('bb')], T);
      await ledger.append(partition, [entry('cccc')], T + 60_000);
      await ledger.append(partition, [entry('dddddd')], T + 120_000);
      const request = {
        consumedUpTo: Position.of(ledgerId, 2n),
        retentionTimeMs: 90_000,
        retentionSizeBytes: -1,
        nowMs: T + 180_000,
        maxBatches: 100,
      };

      // The batches at T and T + 60 s are older than 90 s; the one at T + 60 s ends at entry 2,
      // which is consumed: both go. Entry 3 is not consumed: it stays, however old.
      const trimmed = await ledger.trim(partition, { ...request, nowMs: T + 400_000 });

      expect(trimmed).toEqual({
        entries: 3,
        bytes: 10,
        from: Position.of(ledgerId, 0n),
        to: Position.of(ledgerId, 3n),
      });
      const state = await ledger.state(partition);
      expect(state).toMatchObject({
        firstKept: Position.of(ledgerId, 3n),
        entriesDeleted: 3,
        bytesDeleted: 10,
        msgInCounter: 4,
        bytesInCounter: 16,
      });
      expect(await ledger.readEntry(Position.of(ledgerId, 2n))).toBeUndefined();
      expect((await ledger.readEntry(Position.of(ledgerId, 3n)))?.payload).toBe('dddddd');
      expect(
        await ledger.trim(partition, { ...request, consumedUpTo: Position.of(ledgerId, 3n) }),
      ).toMatchObject({
        entries: 0,
      });
      expect(await ledger.trim(uniquePartition(), request)).toBeUndefined();
    });

    describe('with entry expiry (docs/design/storage.md#entry-expiry)', () => {
      const T = 1_700_000_000_000;
      const DAY = 86_400_000;
      const expiring = () => {
        const clock = new ManualClock(T);
        return {
          clock,
          ledger: storage().ledger(1_000, { clock, expireEntries: true, entryExpiryMs: 14 * DAY }),
        };
      };
      const allConsumed = (consumedUpTo: Position, nowMs: number) => ({
        consumedUpTo,
        retentionTimeMs: 0,
        retentionSizeBytes: 0,
        nowMs,
        maxBatches: 100,
      });

      it('a 0/0 trim only moves the first kept position: readEntry skips what went, which stays stored until it expires', async () => {
        const { clock, ledger } = expiring();
        const partition = uniquePartition();
        const ledgerId = (await ledger.initialize(partition)).ledgers[0]!.ledgerId;
        await ledger.append(partition, [entry('aaaa'), entry('bb')], T);
        await ledger.append(partition, [entry('cccc')], T);
        await ledger.append(partition, [entry('dddddd')], T);

        // Three of four entries, 16 bytes stored: the bytes that went are the average's share.
        expect(await ledger.trim(partition, allConsumed(pos(ledgerId, 2), T))).toEqual({
          entries: 3,
          bytes: 12,
          from: pos(ledgerId, 0),
          to: pos(ledgerId, 3),
        });
        expect(await ledger.state(partition)).toMatchObject({
          firstKept: pos(ledgerId, 3),
          entriesDeleted: 3,
          bytesDeleted: 12,
        });
        expect(await ledger.readEntry(pos(ledgerId, 2))).toBeUndefined();
        expect((await ledger.readEntry(pos(ledgerId, 3)))?.payload).toBe('dddddd');
        // Not deleted (no write unit spent): a range read still finds it until it expires.
        expect((await ledger.readEntries(ledgerId, 0n, 3n)).map((e) => e.payload)).toEqual([
          'aaaa',
          'bb',
          'cccc',
          'dddddd',
        ]);
        // Everything stored goes: the bytes are exact again.
        expect(await ledger.trim(partition, allConsumed(pos(ledgerId, 3), T))).toMatchObject({
          entries: 1,
          bytes: 4,
        });

        clock.set(T + 14 * DAY);
        expect(await ledger.readEntries(ledgerId, 0n, 3n)).toEqual([]);
        expect(await ledger.firstWrittenAfter(ledgerId, -1n)).toBeUndefined();
      });

      it('a 0/0 trim deletes the batches written without expiry (before it was on), and only those', async () => {
        const before = storage().ledger(1_000);
        const { ledger } = expiring();
        const partition = uniquePartition();
        const ledgerId = (await before.initialize(partition)).ledgers[0]!.ledgerId;
        await before.append(partition, [entry('old-1')], T);
        await before.append(partition, [entry('old-2')], T);
        await ledger.append(partition, [entry('new')], T);

        expect(await ledger.trim(partition, allConsumed(pos(ledgerId, 2), T))).toMatchObject({ entries: 3 });

        // The old batches are deleted; the new one stays stored until it expires.
        expect((await ledger.readEntries(ledgerId, 0n, 2n)).map((e) => e.payload)).toEqual(['new']);
      });

      it('renewExpiry renews what is kept before it expires, and is not due again for days', async () => {
        const { clock, ledger } = expiring();
        const partition = uniquePartition();
        const ledgerId = (await ledger.initialize(partition)).ledgers[0]!.ledgerId;
        await ledger.append(partition, [entry('a')], T);
        await ledger.append(partition, [entry('b')], T + 1_000);

        const now = T + 8 * DAY;
        expect(await ledger.renewExpiry(partition, { nowMs: now, maxBatches: 100 })).toEqual({
          renewed: 2,
          walked: 2,
          dueAtMs: now - 60_000 + 14 * DAY - 3.5 * DAY,
        });
        expect(await ledger.renewExpiry(partition, { nowMs: now + DAY, maxBatches: 100 })).toEqual({
          renewed: 0,
          walked: 0,
        });
        clock.set(T + 15 * DAY);
        expect((await ledger.readEntries(ledgerId, 0n, 1n)).map((e) => e.payload)).toEqual(['a', 'b']);
        expect(await ledger.renewExpiry(uniquePartition(), { nowMs: now, maxBatches: 100 })).toBeUndefined();
      });
    });

    it('readEntry returns payload, key, properties, event time, deliver-at and publish time', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      const full = entry('héllo wörld ✓ 😀', {
        key: 'key-1',
        properties: { region: 'eu', ünï: 'çödé' },
        eventTimeMs: 1_700_000_000_123,
        deliverAtMs: 1_700_000_060_000,
      });

      const {
        positions: [fullAt, minimalAt],
      } = await ledger.append(partition, [full, entry('plain')], 1_700_000_000_500);

      expect(await ledger.readEntry(fullAt!)).toStrictEqual({
        position: fullAt!,
        payload: 'héllo wörld ✓ 😀',
        key: 'key-1',
        properties: { region: 'eu', ünï: 'çödé' },
        eventTimeMs: 1_700_000_000_123,
        deliverAtMs: 1_700_000_060_000,
        publishTimeMs: 1_700_000_000_500,
      } satisfies StoredEntry);
      expect(await ledger.readEntry(minimalAt!)).toStrictEqual({
        position: minimalAt!,
        payload: 'plain',
        properties: {},
        publishTimeMs: 1_700_000_000_500,
      } satisfies StoredEntry);
    });

    it('an empty payload and empty property values round trip', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      await ledger.initialize(partition);

      const {
        positions: [at],
      } = await ledger.append(partition, [entry('', { key: '', properties: { empty: '' } })], 7);

      expect(await ledger.readEntry(at!)).toStrictEqual({
        position: at!,
        payload: '',
        key: '',
        properties: { empty: '' },
        publishTimeMs: 7,
      } satisfies StoredEntry);
    });

    it.each([
      [[3, 4, 5]],
      [[12]],
      [[5, 5, 2]],
      [[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]],
    ])('rolls over at 5 entries per ledger: 12 entries in batches of %j make ledgers of 5, 5 and 2', async (sizes) => {
      const ledger = storage().ledger(5);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      const batches = sizes.map((size, batch) =>
        Array.from({ length: size }, (_, i) => entry(`batch ${batch} entry ${i}`)),
      );

      const positions: Position[] = [];
      for (const batch of batches) positions.push(...(await ledger.append(partition, batch, 10)).positions);

      const state = await ledger.state(partition);
      const ledgerIds = (state?.ledgers ?? []).map((info) => info.ledgerId);
      expect(state?.ledgers.map((info) => info.entries)).toEqual([5n, 5n, 2n]);
      expect(ledgerIds[0]! < ledgerIds[1]! && ledgerIds[1]! < ledgerIds[2]!).toBe(true);
      const [l1, l2, l3] = ledgerIds;
      expect(texts(positions)).toEqual([
        ...[0, 1, 2, 3, 4].map((e) => `${l1}:${e}`),
        ...[0, 1, 2, 3, 4].map((e) => `${l2}:${e}`),
        ...[0, 1].map((e) => `${l3}:${e}`),
      ]);
      for (const ledgerId of ledgerIds) expect(await ledger.ownerOf(ledgerId)).toEqual(partition);
      const payloads = await Promise.all(positions.map(async (p) => (await ledger.readEntry(p))?.payload));
      expect(payloads).toEqual(batches.flat().map((e) => e.payload));
    });

    it('two partitions never share a ledgerId, and ownerOf names the right one', async () => {
      const ledger = storage().ledger(2);
      const [one, two] = [uniquePartition(), uniquePartition()];
      await Promise.all([ledger.initialize(one), ledger.initialize(two)]);

      await Promise.all(
        [one, two].flatMap((partition) => [1, 2, 3].map((n) => ledger.append(partition, [entry(`${n}`)], n))),
      );

      const idsOf = async (partition: TopicName) =>
        ((await ledger.state(partition))?.ledgers ?? []).map((info) => info.ledgerId);
      const [idsOne, idsTwo] = [await idsOf(one), await idsOf(two)];
      expect(idsOne.length).toBeGreaterThanOrEqual(2);
      expect(idsTwo.length).toBeGreaterThanOrEqual(2);
      expect(idsOne.filter((id) => idsTwo.includes(id))).toEqual([]);
      for (const id of idsOne) expect(await ledger.ownerOf(id)).toEqual(one);
      for (const id of idsTwo) expect(await ledger.ownerOf(id)).toEqual(two);
    });

    it('8 concurrent appends with rollover at 5 get unique positions, and the ledgers account for every entry', async () => {
      const ledger = storage().ledger(5);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      const batches = [1, 2, 3, 1, 2, 3, 1, 2].map((size, batch) =>
        Array.from({ length: size }, (_, i) => entry(`writer ${batch} entry ${i}`)),
      );
      const total = batches.flat().length;

      const results = await Promise.all(
        batches.map(async (batch) => (await ledger.append(partition, batch, 1)).positions),
      );

      const positions = results.flat();
      expect(new Set(texts(positions)).size).toBe(total);
      const state = await ledger.state(partition);
      const counts = (state?.ledgers ?? []).map((info) => info.entries);
      expect(counts.reduce((sum, n) => sum + n, 0n)).toBe(BigInt(total));
      expect(counts.slice(0, -1).every((n) => n === 5n)).toBe(true);
      expect(state?.msgInCounter).toBe(total);
      for (const [batch, batchPositions] of results.entries()) {
        const payloads = await Promise.all(
          batchPositions.map(async (p) => (await ledger.readEntry(p))?.payload),
        );
        expect(payloads).toEqual(batches[batch]!.map((e) => e.payload));
      }
    });

    it('a batch of more than 350 KB (3 x 200 KB) is stored and every entry reads back', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      const batch = ['x', 'y', 'z'].map((fill, i) => entry(`${i}:${fill.repeat(200 * 1024)}`, { key: fill }));

      const { positions } = await ledger.append(partition, batch, 99);

      expect(positions).toHaveLength(3);
      for (const [i, position] of positions.entries()) {
        const stored = await ledger.readEntry(position);
        expect(stored?.key).toBe(batch[i]!.key);
        expect(sha256(stored?.payload ?? '')).toBe(sha256(batch[i]!.payload));
      }
      expect((await ledger.state(partition))?.bytesInCounter).toBe(3 * (200 * 1024 + 2));
      const ledgerId = positions[0]!.ledgerId;
      const ranged = await ledger.readEntries(ledgerId, positions[0]!.entryId, positions[2]!.entryId);
      expect(ranged.map((e) => sha256(e.payload))).toEqual(batch.map((e) => sha256(e.payload)));
    });

    it('readEntries gives the written entries of a range in order, across chunks, as readEntry gives them', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      const { ledgers } = await ledger.initialize(partition);
      const ledgerId = ledgers[0]!.ledgerId;
      // Three publishes, three chunks: entries 0-2, 3, 4-7.
      await ledger.append(partition, [entry('a', { key: 'k' }), entry('b'), entry('c')], 1);
      await ledger.append(partition, [entry('d', { properties: { p: '1' }, eventTimeMs: 5 })], 2);
      await ledger.append(partition, [entry('e'), entry('f', { deliverAtMs: 9 }), entry('g'), entry('h')], 3);
      const one = async (entryId: number) => (await ledger.readEntry(pos(ledgerId, entryId)))!;

      const [all, middle, single, pastEnd, inverted, missingOne, missingRange, eventual] = await Promise.all([
        ledger.readEntries(ledgerId, 0n, 7n),
        ledger.readEntries(ledgerId, 1n, 5n),
        ledger.readEntries(ledgerId, 3n, 3n),
        ledger.readEntries(ledgerId, 6n, 100n),
        ledger.readEntries(ledgerId, 5n, 4n),
        ledger.readEntries(ledgerId, 8n, 8n),
        ledger.readEntries(ledgerId, 8n, 9n),
        ledger.readEntries(ledgerId, 3n, 4n, { consistent: false }),
      ]);

      expect(all).toStrictEqual(await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(one)));
      expect(middle.map((e) => e.payload)).toEqual(['b', 'c', 'd', 'e', 'f']);
      expect(middle).toStrictEqual(await Promise.all([1, 2, 3, 4, 5].map(one)));
      expect(single).toStrictEqual([await one(3)]);
      expect(texts(pastEnd.map((e) => e.position))).toEqual([`${ledgerId}:6`, `${ledgerId}:7`]);
      expect(inverted).toEqual([]);
      expect(missingOne).toEqual([]);
      expect(missingRange).toEqual([]);
      expect(eventual.map((e) => e.payload)).toEqual(['d', 'e']);
    });

    it('a process whose cached chunk ends just before a read finds what another process wrote there (split chunks, a later publish, eventually consistent too)', async () => {
      // Two processes (each ledger object keeps its own chunk cache): the reader skips the
      // backward Query when its cached chunk ends just before the read position.
      const reader = storage().ledger(1_000);
      const writer = storage().ledger(1_000);
      const partition = uniquePartition();
      const { ledgers } = await reader.initialize(partition);
      const ledgerId = ledgers[0]!.ledgerId;
      await reader.append(partition, [entry('a'), entry('b')], 1); // cached: 0-1
      const big = ['x', 'y', 'z'].map((fill) => entry(fill.repeat(200 * 1024))); // chunks 2, 3, 4
      await writer.append(partition, big, 2);
      await writer.append(partition, [entry('c'), entry('d')], 3); // chunk 5-6

      const fromEnd = await reader.readEntries(ledgerId, 2n, 100n);
      expect(fromEnd.map((e) => sha256(e.payload))).toEqual(
        [...big, entry('c'), entry('d')].map((e) => sha256(e.payload)),
      );
      expect(texts(fromEnd.map((e) => e.position))).toEqual([2, 3, 4, 5, 6].map((i) => `${ledgerId}:${i}`));
      // Now 2-6 are cached in the reader too: a read inside a chunk and one past the end.
      await writer.append(partition, [entry('e')], 4); // chunk 7
      expect((await reader.readEntries(ledgerId, 6n, 7n)).map((e) => e.payload)).toEqual(['d', 'e']);
      expect((await reader.readEntries(ledgerId, 7n, 9n, { consistent: false })).length).toBeLessThanOrEqual(
        1,
      );
      expect((await reader.readEntries(ledgerId, 7n, 9n)).map((e) => e.payload)).toEqual(['e']);
    });

    it('readEntries reads one ledger only; an unknown ledger or a range past the end gives nothing', async () => {
      const ledger = storage().ledger(5);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      await ledger.append(
        partition,
        Array.from({ length: 8 }, (_, i) => entry(`${i}`)),
        1,
      );
      const [first, second] = ((await ledger.state(partition))?.ledgers ?? []).map((info) => info.ledgerId);

      const [ofFirst, ofSecond, beyond, unknown] = await Promise.all([
        ledger.readEntries(first!, 0n, 99n),
        ledger.readEntries(second!, 0n, 99n),
        ledger.readEntries(second!, 3n, 99n),
        ledger.readEntries(1n << 62n, 0n, 99n),
      ]);

      expect(ofFirst.map((e) => e.payload)).toEqual(['0', '1', '2', '3', '4']);
      expect(ofSecond.map((e) => e.payload)).toEqual(['5', '6', '7']);
      expect(texts(ofSecond.map((e) => e.position))).toEqual([0, 1, 2].map((i) => `${second}:${i}`));
      expect(beyond).toEqual([]);
      expect(unknown).toEqual([]);
    });

    it('readEntry of a position never written returns undefined', async () => {
      const ledger = storage().ledger(1_000);
      const partition = uniquePartition();
      const { ledgers } = await ledger.initialize(partition);
      const ledgerId = ledgers[0]!.ledgerId;
      await ledger.append(partition, [entry('a'), entry('b')], 1);

      const reads = await Promise.all(
        [pos(ledgerId, 2), pos(ledgerId, 999), pos(1n << 62n, 0)].map((p) => ledger.readEntry(p)),
      );

      expect(reads).toEqual([undefined, undefined, undefined]);
    });

    it('append on a partition never initialized throws TopicNotFoundError and creates nothing', async () => {
      const ledger = storage().ledger(5);
      const partition = uniquePartition();

      await expect(ledger.append(partition, [entry('lost')], 1)).rejects.toBeInstanceOf(TopicNotFoundError);

      expect(await ledger.state(partition)).toBeUndefined();
    });

    it('detachPartition then purgeLedger remove its state, entries and ledger index, and nothing of another partition', async () => {
      const ledger = storage().ledger(3);
      const [doomed, kept] = [uniquePartition(), uniquePartition()];
      await Promise.all([ledger.initialize(doomed), ledger.initialize(kept)]);
      const { positions } = await ledger.append(
        doomed,
        Array.from({ length: 7 }, (_, i) => entry(`${i}`)),
        1,
      );
      const {
        positions: [keptAt],
      } = await ledger.append(kept, [entry('kept')], 1);
      const ledgerIds = ((await ledger.state(doomed))?.ledgers ?? []).map((info) => info.ledgerId);
      expect(ledgerIds).toHaveLength(3);

      // Another incarnation's first ledger: nothing is detached.
      await ledger.detachPartition(doomed, (ledgerIds[0] as bigint) + 1_000_000n);
      expect(await ledger.state(doomed)).toBeDefined();
      await ledger.detachPartition(doomed, ledgerIds[0] as bigint);
      expect(await ledger.state(doomed)).toBeUndefined();
      // Detached, not purged: the entries stay until purgeLedger, which goes page by page.
      expect((await ledger.readEntries(ledgerIds[0] as bigint, 0n, 2n)).length).toBeLessThanOrEqual(3);
      const calls: boolean[] = [];
      for (const ledgerId of ledgerIds) {
        for (let more = true; more; ) {
          more = await ledger.purgeLedger(ledgerId, 1);
          calls.push(more);
        }
      }
      expect(calls.filter((more) => more).length).toBeGreaterThan(0);

      expect(await Promise.all(positions.map((p) => ledger.readEntry(p)))).toEqual(
        positions.map(() => undefined),
      );
      expect(await Promise.all(ledgerIds.map((id) => ledger.ownerOf(id)))).toEqual(
        ledgerIds.map(() => undefined),
      );
      await expect(ledger.append(doomed, [entry('late')], 2)).rejects.toBeInstanceOf(TopicNotFoundError);
      expect((await ledger.readEntry(keptAt!))?.payload).toBe('kept');
      expect((await ledger.state(kept))?.msgInCounter).toBe(1);
    });

    it('msgInCounter and bytesInCounter count what was appended (bytes of UTF-8 payloads), across rollovers', async () => {
      const ledger = storage().ledger(2);
      const partition = uniquePartition();
      await ledger.initialize(partition);

      // 'abc' 3 bytes, 'héllo' 6, '✓' 3, '😀' 4: 16 bytes in 4 messages; the first call spans two ledgers.
      await ledger.append(partition, [entry('abc'), entry('héllo'), entry('✓')], 1);
      await ledger.append(partition, [entry('😀')], 2);

      const state = await ledger.state(partition);
      expect(state).toMatchObject({ msgInCounter: 4, bytesInCounter: 16 });
      expect(state?.ledgers.map((info) => info.entries)).toEqual([2n, 2n]);
    });

    it('after many rollovers the state lists every ledger in order, as read by a process that never read it, and as announceSubscriptions returns it', async () => {
      const ledger = storage().ledger(2);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      const written: Position[] = [];
      for (let i = 0; i < 25; i++)
        written.push(...(await ledger.append(partition, [entry(`${i}`)], i)).positions);

      const warm = await ledger.state(partition);
      const cold = await storage().ledger(2).state(partition);
      const announced = await storage().ledger(2).announceSubscriptions(partition);

      const ledgerIds = [...new Set(written.map((position) => position.ledgerId))];
      expect(ledgerIds).toHaveLength(13);
      const layout = ledgerIds.map((ledgerId, i) => ({ ledgerId, entries: i < 12 ? 2n : 1n }));
      expect(warm?.ledgers).toEqual(layout);
      expect(cold?.ledgers).toEqual(layout);
      expect(announced.ledgers).toEqual(layout);
      // Another rollover, seen by the process that read the layout before.
      await storage()
        .ledger(2)
        .append(partition, [entry('25'), entry('26')], 25);
      expect((await ledger.state(partition))?.ledgers.map((info) => info.entries)).toEqual([
        ...Array(13).fill(2n),
        1n,
      ]);
    });

    it('a partition deleted and created again lists only its new ledgers, before and after the old ones are purged', async () => {
      const ledger = storage().ledger(1);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      for (let i = 0; i < 3; i++) await ledger.append(partition, [entry(`old ${i}`)], i);
      const old = ((await ledger.state(partition))?.ledgers ?? []).map((info) => info.ledgerId);
      await ledger.detachPartition(partition, old[0] as bigint);

      await ledger.initialize(partition);
      for (let i = 0; i < 3; i++) await ledger.append(partition, [entry(`new ${i}`)], i);
      const renewed = await ledger.state(partition);
      for (const ledgerId of old) while (await ledger.purgeLedger(ledgerId, 100));
      const purged = await storage().ledger(1).state(partition);

      expect(renewed?.ledgers).toHaveLength(3);
      expect(renewed?.ledgers.every((info) => info.ledgerId > (old.at(-1) as bigint))).toBe(true);
      expect(purged?.ledgers).toEqual(renewed?.ledgers);
      expect(purged?.msgInCounter).toBe(3);
    });

    it('firstWrittenAfter skips ids allocated but never written and gives the publish time', async () => {
      const ledger = storage().ledger(100);
      const partition = uniquePartition();
      await ledger.initialize(partition);
      const {
        positions: [a],
      } = await ledger.append(partition, [entry('a')], 5);
      const {
        positions: [, c],
      } = await ledger.append(partition, [entry('b'), entry('c')], 9);
      const ledgerId = (a as Position).ledgerId;

      expect(await ledger.firstWrittenAfter(ledgerId, -1n)).toEqual({ position: a, publishTimeMs: 5 });
      expect((await ledger.firstWrittenAfter(ledgerId, 0n))?.publishTimeMs).toBe(9);
      expect(await ledger.firstWrittenAfter(ledgerId, (c as Position).entryId)).toBeUndefined();
      expect(await ledger.firstWrittenAfter(ledgerId + 1_000_000n, -1n)).toBeUndefined();
    });

    it('announceSubscriptions: appends read the version it set, with the ids; the state it returns holds every earlier allocation', async () => {
      const ledger = storage().ledger(3);
      const partition = uniquePartition();
      const initial = (await ledger.initialize(partition)).subscriptionsVersion;
      const first = await ledger.append(partition, [entry('a'), entry('b')], 1);
      expect(first.subscriptionsVersion).toBe(initial);
      // Across a rollover the version stays the partition's.
      expect((await ledger.append(partition, [entry('c'), entry('d')], 1)).subscriptionsVersion).toBe(
        initial,
      );

      const announced = await ledger.announceSubscriptions(partition);

      expect(announced.subscriptionsVersion).not.toBe(initial);
      expect(announced.ledgers.map((info) => info.entries)).toEqual([3n, 1n]);
      const after = await ledger.append(partition, [entry('e')], 2);
      expect(after.subscriptionsVersion).toBe(announced.subscriptionsVersion);
      expect((await ledger.state(partition))?.subscriptionsVersion).toBe(announced.subscriptionsVersion);
      const again = await ledger.announceSubscriptions(partition);
      expect(new Set([initial, announced.subscriptionsVersion, again.subscriptionsVersion]).size).toBe(3);
    });

    it('announceSubscriptions: a partition deleted and created again never repeats a version; an unknown one throws', async () => {
      const ledger = storage().ledger(3);
      const partition = uniquePartition();
      const seen = [(await ledger.initialize(partition)).subscriptionsVersion];
      const first = (await ledger.state(partition))?.ledgers[0]?.ledgerId as bigint;
      seen.push((await ledger.announceSubscriptions(partition)).subscriptionsVersion);
      await ledger.detachPartition(partition, first);

      seen.push((await ledger.initialize(partition)).subscriptionsVersion);
      seen.push((await ledger.announceSubscriptions(partition)).subscriptionsVersion);

      expect(new Set(seen).size).toBe(4);
      await expect(ledger.announceSubscriptions(uniquePartition())).rejects.toBeInstanceOf(
        TopicNotFoundError,
      );
    });
  });

  describe('TopicCatalog', () => {
    const topicRecord = (topic: TopicName, partitions = 0, createdAtMs = 1_000): TopicRecord => ({
      topic,
      partitions,
      createdAtMs,
    });
    const subscription = (name: string, fields: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
      name,
      type: 'Shared',
      cursorId: uniqueId('cursor'),
      createdAtMs: 2_000,
      ...fields,
    });

    it('createTopic then getTopic gives the record back; an unknown topic is undefined', async () => {
      const { topicCatalog } = storage();
      const namespace = uniqueNamespace();
      const partitioned = topicRecord(
        TopicName.parse(`persistent://${namespace}/orders`),
        4,
        1_700_000_000_000,
      );
      const plain = topicRecord(TopicName.parse(`non-persistent://${namespace}/events`), 0, 5);

      await topicCatalog.createTopic(partitioned);
      await topicCatalog.createTopic(plain);

      expect(await topicCatalog.getTopic(partitioned.topic)).toEqual(partitioned);
      expect(await topicCatalog.getTopic(plain.topic)).toEqual(plain);
      expect(
        await topicCatalog.getTopic(TopicName.parse(`persistent://${namespace}/events`)),
      ).toBeUndefined();
    });

    it("listTopics gives exactly the namespace's topics of that domain, sorted by name", async () => {
      const { topicCatalog } = storage();
      const namespace = uniqueNamespace();
      const names = ['b', 'a', 'a-1', 'A', 'z.9', '10', '9'];
      for (const [i, name] of names.entries()) {
        await topicCatalog.createTopic(
          topicRecord(TopicName.parse(`persistent://${namespace}/${name}`), i, i),
        );
      }
      await topicCatalog.createTopic(topicRecord(TopicName.parse(`non-persistent://${namespace}/np`)));
      await topicCatalog.createTopic(topicRecord(TopicName.parse(`persistent://${namespace}-other/a`)));

      const persistent = await topicCatalog.listTopics('persistent', namespace);
      const nonPersistent = await topicCatalog.listTopics('non-persistent', namespace);

      expect(persistent.map((record) => record.topic.localName)).toEqual([
        '10',
        '9',
        'A',
        'a',
        'a-1',
        'b',
        'z.9',
      ]);
      expect(persistent.find((record) => record.topic.localName === 'z.9')).toEqual(
        topicRecord(TopicName.parse(`persistent://${namespace}/z.9`), 4, 4),
      );
      expect(nonPersistent.map((record) => record.topic.toString())).toEqual([
        `non-persistent://${namespace}/np`,
      ]);
      expect(await topicCatalog.listTopics('persistent', uniqueNamespace())).toEqual([]);
    });

    it('deleteTopic removes the topic from get and list; deleting an unknown topic is a no-op', async () => {
      const { topicCatalog } = storage();
      const namespace = uniqueNamespace();
      const [gone, kept] = ['gone', 'kept'].map((name) =>
        topicRecord(TopicName.parse(`${namespace}/${name}`)),
      );
      await topicCatalog.createTopic(gone!);
      await topicCatalog.createTopic(kept!);

      await topicCatalog.deleteTopic(gone!.topic);
      await topicCatalog.deleteTopic(TopicName.parse(`${namespace}/never`));

      expect(await topicCatalog.getTopic(gone!.topic)).toBeUndefined();
      expect(await topicCatalog.listTopics('persistent', namespace)).toEqual([kept]);
    });

    it('creating a topic that exists throws TopicAlreadyExistsError and keeps the first record', async () => {
      const { topicCatalog } = storage();
      const topic = TopicName.parse(`persistent://${uniqueNamespace()}/orders`);
      await topicCatalog.createTopic(topicRecord(topic, 3, 100));

      await expect(topicCatalog.createTopic(topicRecord(topic, 8, 200))).rejects.toBeInstanceOf(
        TopicAlreadyExistsError,
      );

      expect(await topicCatalog.getTopic(topic)).toEqual(topicRecord(topic, 3, 100));
    });

    it("subscriptions: create, get, list (sorted by name, only the partition's own) and delete", async () => {
      const { topicCatalog } = storage();
      const partition = uniquePartition();
      const sibling = partition.partition(1);
      const records = [
        subscription('sub-b'),
        subscription('sub-a', { type: 'Exclusive' }),
        subscription('Sub c#1', { type: 'Key_Shared' }),
        subscription('failover', { type: 'Failover', createdAtMs: 3 }),
      ];
      for (const record of records) await topicCatalog.createSubscription(partition, record);
      await topicCatalog.createSubscription(sibling, subscription('sub-a'));

      const listed = await topicCatalog.listSubscriptions(partition);
      await topicCatalog.deleteSubscription(partition, 'sub-b');
      await topicCatalog.deleteSubscription(partition, 'never-created');

      expect(listed.map((record) => record.name)).toEqual(['Sub c#1', 'failover', 'sub-a', 'sub-b']);
      expect(listed).toEqual(expect.arrayContaining(records));
      expect(await topicCatalog.getSubscription(partition, 'sub-a')).toEqual(records[1]);
      expect(await topicCatalog.getSubscription(partition, 'sub-b')).toBeUndefined();
      expect((await topicCatalog.listSubscriptions(partition)).map((record) => record.name)).toEqual([
        'Sub c#1',
        'failover',
        'sub-a',
      ]);
      expect(await topicCatalog.listSubscriptions(sibling)).toHaveLength(1);
      expect(await topicCatalog.listSubscriptions(uniquePartition())).toEqual([]);
    });

    it('creating a subscription that exists throws SubscriptionAlreadyExistsError and keeps the first record', async () => {
      const { topicCatalog } = storage();
      const partition = uniquePartition();
      const first = subscription('sub', { type: 'Exclusive' });
      await topicCatalog.createSubscription(partition, first);

      await expect(
        topicCatalog.createSubscription(partition, subscription('sub', { type: 'Shared' })),
      ).rejects.toBeInstanceOf(SubscriptionAlreadyExistsError);

      expect(await topicCatalog.getSubscription(partition, 'sub')).toEqual(first);
    });

    it('feed progress: none until a start records it; a claim moves it only from the job it names', async () => {
      const { topicCatalog } = storage();
      const partition = uniquePartition();
      const record = subscription('sub');
      await topicCatalog.createSubscription(partition, record);
      const { cursorId } = record;
      const none = await topicCatalog.getFeedProgress(partition, 'sub', cursorId);

      const started = await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId,
        expectedJobId: undefined,
        progress: { jobId: 'j1', after: pos(3, 999) },
      });
      const fromAnother = await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId,
        expectedJobId: 'j0',
        progress: { jobId: 'x', after: pos(4, 5) },
      });
      const claimed = await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId,
        expectedJobId: 'j1',
        progress: { jobId: 'j2', after: pos(4, 1_999) },
      });
      const claimedAgain = await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId,
        expectedJobId: 'j1',
        progress: { jobId: 'j2-copy', after: pos(4, 1_999) },
      });
      const progress = await topicCatalog.getFeedProgress(partition, 'sub', cursorId);
      const restarted = await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId,
        expectedJobId: undefined,
        progress: { jobId: 'k1', after: pos(3, 10) },
      });

      expect(none).toBeUndefined();
      expect([started, fromAnother, claimed, claimedAgain, restarted]).toEqual([
        true,
        false,
        true,
        false,
        true,
      ]);
      expect(progress).toEqual({ jobId: 'j2', after: pos(4, 1_999) });
      expect(progress?.after.toString()).toBe('4:1999');
      expect(await topicCatalog.getFeedProgress(partition, 'sub', cursorId)).toEqual({
        jobId: 'k1',
        after: pos(3, 10),
      });
      expect(await topicCatalog.getSubscription(partition, 'sub')).toEqual(record);
      expect(await topicCatalog.listSubscriptions(partition)).toEqual([record]);
    });

    it('feed progress before the first entry of a ledger (a feed waiting for it) round trips', async () => {
      const { topicCatalog } = storage();
      const partition = uniquePartition();
      const record = subscription('sub');
      await topicCatalog.createSubscription(partition, record);

      await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId: record.cursorId,
        expectedJobId: undefined,
        progress: { jobId: 'j1', after: Position.beforeFirst(7n) },
      });

      const progress = await topicCatalog.getFeedProgress(partition, 'sub', record.cursorId);
      expect(progress?.after.toString()).toBe('7:-1');
      expect(progress?.after.isBeforeFirst).toBe(true);
    });

    it('feed progress: of 8 concurrent claims from one job exactly one wins', async () => {
      const { topicCatalog } = storage();
      const partition = uniquePartition();
      const record = subscription('sub');
      await topicCatalog.createSubscription(partition, record);
      await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId: record.cursorId,
        expectedJobId: undefined,
        progress: { jobId: 'j', after: pos(1, 0) },
      });

      const claims = await Promise.all(
        [1, 2, 3, 4, 5, 6, 7, 8].map((n) =>
          topicCatalog.recordFeedProgress(partition, 'sub', {
            cursorId: record.cursorId,
            expectedJobId: 'j',
            progress: { jobId: `next-${n}`, after: pos(1, n) },
          }),
        ),
      );

      expect(claims.filter(Boolean)).toHaveLength(1);
      const winner = claims.indexOf(true) + 1;
      expect(await topicCatalog.getFeedProgress(partition, 'sub', record.cursorId)).toEqual({
        jobId: `next-${winner}`,
        after: pos(1, winner),
      });
    });

    it('feed progress belongs to the subscription with that cursor: gone with it, never created, ids above 2^53 exact', async () => {
      const { topicCatalog } = storage();
      const partition = uniquePartition();
      const first = subscription('sub');
      await topicCatalog.createSubscription(partition, first);
      const big = Position.of(MAX_ID, (1n << 53n) + 1n);
      await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId: first.cursorId,
        expectedJobId: undefined,
        progress: { jobId: 'j', after: big },
      });

      const otherCursor = await topicCatalog.getFeedProgress(partition, 'sub', 'another-cursor');
      const recordedByOther = await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId: 'another-cursor',
        expectedJobId: undefined,
        progress: { jobId: 'k', after: pos(1, 1) },
      });
      const kept = await topicCatalog.getFeedProgress(partition, 'sub', first.cursorId);
      await topicCatalog.deleteSubscription(partition, 'sub');
      const afterDelete = await topicCatalog.recordFeedProgress(partition, 'sub', {
        cursorId: first.cursorId,
        expectedJobId: undefined,
        progress: { jobId: 'j', after: pos(1, 1) },
      });
      const again = subscription('sub');
      await topicCatalog.createSubscription(partition, again);

      expect(otherCursor).toBeUndefined();
      expect(recordedByOther).toBe(false);
      expect(kept?.after.toString()).toBe(`${MAX_ID}:${(1n << 53n) + 1n}`);
      expect(afterDelete).toBe(false);
      expect(await topicCatalog.getSubscription(partition, 'sub')).toEqual(again);
      expect(await topicCatalog.getFeedProgress(partition, 'sub', first.cursorId)).toBeUndefined();
      expect(await topicCatalog.getFeedProgress(partition, 'sub', again.cursorId)).toBeUndefined();
      expect(await topicCatalog.getFeedProgress(uniquePartition(), 'sub', again.cursorId)).toBeUndefined();
    });
  });

  describe('TenantCatalog', () => {
    it('creates a tenant once (TenantAlreadyExistsError), gets, lists sorted and deletes it', async () => {
      const { tenantCatalog } = storage();
      const [first, second] = [uniqueId('tenant-b'), uniqueId('tenant-a')].sort();
      const info = { adminRoles: ['ops', 'alice'], allowedClusters: ['standalone'] };
      await tenantCatalog.createTenant({ tenant: second as string, info, createdAtMs: 5 });
      await tenantCatalog.createTenant({
        tenant: first as string,
        info: { adminRoles: [], allowedClusters: [] },
        createdAtMs: 6,
      });

      const again = await tenantCatalog
        .createTenant({ tenant: second as string, info, createdAtMs: 7 })
        .catch((error: unknown) => error);
      const got = await tenantCatalog.getTenant(second as string);
      const listed = (await tenantCatalog.listTenants()).map((record) => record.tenant);
      await tenantCatalog.deleteTenant(first as string);
      await tenantCatalog.deleteTenant(uniqueId('never-created'));

      expect(again).toBeInstanceOf(TenantAlreadyExistsError);
      expect(got).toEqual({ tenant: second, info, createdAtMs: 5 });
      expect(listed.filter((name) => name === first || name === second)).toEqual([first, second]);
      expect(listed).toEqual([...listed].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      expect(await tenantCatalog.getTenant(first as string)).toBeUndefined();
      expect(await tenantCatalog.getTenant(uniqueId('never-created'))).toBeUndefined();
    });

    it("creates a namespace once (NamespaceAlreadyExistsError), lists a tenant's namespaces sorted, deletes one", async () => {
      const { tenantCatalog } = storage();
      const tenant = uniqueId('tenant');
      const other = uniqueId('tenant');
      await tenantCatalog.createNamespace({ tenant, namespace: 'b', createdAtMs: 1 });
      await tenantCatalog.createNamespace({ tenant, namespace: 'a', createdAtMs: 2 });
      await tenantCatalog.createNamespace({ tenant: other, namespace: 'c', createdAtMs: 3 });

      const again = await tenantCatalog
        .createNamespace({ tenant, namespace: 'b', createdAtMs: 4 })
        .catch((error: unknown) => error);
      const listed = await tenantCatalog.listNamespaces(tenant);
      const got = await tenantCatalog.getNamespace(tenant, 'b');
      await tenantCatalog.deleteNamespace(tenant, 'b');
      await tenantCatalog.deleteNamespace(tenant, 'never-created');

      expect(again).toBeInstanceOf(NamespaceAlreadyExistsError);
      expect(listed).toEqual([
        { tenant, namespace: 'a', createdAtMs: 2 },
        { tenant, namespace: 'b', createdAtMs: 1 },
      ]);
      expect(got).toEqual({ tenant, namespace: 'b', createdAtMs: 1 });
      expect(await tenantCatalog.listNamespaces(tenant)).toEqual([
        { tenant, namespace: 'a', createdAtMs: 2 },
      ]);
      expect(await tenantCatalog.getNamespace(tenant, 'b')).toBeUndefined();
      expect(await tenantCatalog.listNamespaces(uniqueId('tenant'))).toEqual([]);
    });

    it('keeps tenants and namespaces apart from the topics of the same table', async () => {
      const { tenantCatalog, topicCatalog } = storage();
      const tenant = uniqueId('tenant');
      const topic = TopicName.parse(`persistent://${tenant}/ns/orders`);
      await topicCatalog.createTopic({ topic, partitions: 0, createdAtMs: 1 });
      await tenantCatalog.createNamespace({ tenant, namespace: 'ns', createdAtMs: 1 });

      expect(await tenantCatalog.listNamespaces(tenant)).toHaveLength(1);
      expect(
        (await topicCatalog.listTopics('persistent', `${tenant}/ns`)).map((r) => r.topic.toString()),
      ).toEqual([topic.toString()]);
      expect(
        (await topicCatalog.listAllTopics()).some(
          (r) => r.topic.tenant === tenant && r.topic.namespace !== 'ns',
        ),
      ).toBe(false);
    });
  });

  describe('PermissionStore', () => {
    it('grant, list and revoke', async () => {
      const { permissionStore } = storage();
      const resource = `persistent://${uniqueNamespace()}/orders`;

      await permissionStore.grant(resource, 'alice', ['produce', 'consume']);
      await permissionStore.grant(resource, 'bob', ['acknowledge_message']);
      const granted = await permissionStore.list(resource);
      await permissionStore.revoke(resource, 'alice');
      await permissionStore.revoke(resource, 'nobody');

      expect(granted).toEqual({ alice: ['consume', 'produce'], bob: ['acknowledge_message'] });
      expect(await permissionStore.list(resource)).toEqual({ bob: ['acknowledge_message'] });
      expect(await permissionStore.list(`${resource}-never-granted`)).toEqual({});
    });

    it("a grant replaces the role's actions on that resource; granting nothing revokes", async () => {
      const { permissionStore } = storage();
      const resource = uniqueNamespace();
      await permissionStore.grant(resource, 'alice', ['produce', 'consume', 'acknowledge_message']);

      await permissionStore.grant(resource, 'alice', ['consume']);
      const replaced = await permissionStore.list(resource);
      await permissionStore.grant(resource, 'alice', []);

      expect(replaced).toEqual({ alice: ['consume'] });
      expect(await permissionStore.list(resource)).toEqual({});
    });

    it('a grant naming an action twice holds it once', async () => {
      const { permissionStore } = storage();
      const resource = uniqueNamespace();

      await permissionStore.grant(resource, 'alice', ['consume', 'produce', 'consume']);

      expect(await permissionStore.list(resource)).toEqual({ alice: ['consume', 'produce'] });
    });

    it('actionsOf unions the role’s actions over several resources; other roles see nothing', async () => {
      const { permissionStore } = storage();
      const namespace = uniqueNamespace();
      const topic = `persistent://${namespace}/orders`;
      await permissionStore.grant(namespace, 'alice', ['produce']);
      await permissionStore.grant(topic, 'alice', ['consume']);
      await permissionStore.grant(`persistent://${namespace}/other`, 'alice', ['acknowledge_message']);
      await permissionStore.grant(topic, 'bob', ['acknowledge_message']);

      const alice = await permissionStore.actionsOf('alice', [topic, namespace, topic]);
      const carol = await permissionStore.actionsOf('carol', [topic, namespace]);
      const none = await permissionStore.actionsOf('alice', []);

      expect([...alice].sort()).toEqual(['consume', 'produce']);
      expect(carol.size).toBe(0);
      expect(none.size).toBe(0);
      expect([...(await permissionStore.actionsOf('bob', [namespace]))]).toEqual([]);
    });
  });

  describe('AuditLog', () => {
    /** Just after the records these tests write: none is past its retention. */
    const AUDIT_NOW_MS = 1_700_000_001_000;
    const auditRecord = (topic: string, atMs: number, fields: Partial<AuditRecord> = {}): AuditRecord => ({
      atMs,
      role: 'admin',
      topic,
      position: `3:${atMs}`,
      subscriptions: ['sub-a', 'sub-b'],
      dryRun: false,
      outcome: 'acknowledged',
      requestId: `request-${atMs}`,
      ...fields,
    });

    it('record then list gives the newest first, at most `limit`, and only that topic', async () => {
      const { auditLog } = storage();
      const topic = `persistent://${uniqueNamespace()}/orders`;
      const records = [
        auditRecord(topic, 1_700_000_000_300, { dryRun: true, outcome: '412 cumulative subscription' }),
        auditRecord(topic, 1_700_000_000_100),
        auditRecord(topic, 1_700_000_000_500, { subscriptions: [] }),
        auditRecord(topic, 1_700_000_000_200, { role: 'operator' }),
        auditRecord(topic, 1_700_000_000_400),
      ];
      for (const record of records) await auditLog.record(record);
      await auditLog.record(auditRecord(`${topic}-other`, 1_700_000_000_900));

      const newest = await auditLog.list(topic, 3, AUDIT_NOW_MS);
      const all = await auditLog.list(topic, 10, AUDIT_NOW_MS);

      expect(newest).toEqual([records[2], records[4], records[0]]);
      expect(all.map((record) => record.atMs)).toEqual([
        1_700_000_000_500, 1_700_000_000_400, 1_700_000_000_300, 1_700_000_000_200, 1_700_000_000_100,
      ]);
      expect(all).toEqual(expect.arrayContaining(records));
      expect(await auditLog.list(`${topic}-never`, 5, AUDIT_NOW_MS)).toEqual([]);
    });

    it("leaves out records past their retention that DynamoDB's TTL has not deleted yet", async () => {
      const { auditLog } = storage();
      const topic = `persistent://${uniqueNamespace()}/orders`;
      const day = 86_400_000;
      const records = [0, 1, 2, 3].map((days) => auditRecord(topic, AUDIT_NOW_MS + days * day));
      for (const record of records) await auditLog.record(record);
      // Thirty days (the default retention) and ten seconds after the second record.
      const nowMs = AUDIT_NOW_MS + (1 + DEFAULT_AUDIT_RETENTION_DAYS) * day + 10_000;

      const newest = await auditLog.list(topic, 1, nowMs);
      const all = await auditLog.list(topic, 10, nowMs);

      expect(newest).toEqual([records[3]]);
      expect(all).toEqual([records[3], records[2]]);
      expect(await auditLog.list(topic, 10, nowMs + 2 * day)).toEqual([]);
    });

    it('a request id containing # round trips', async () => {
      const { auditLog } = storage();
      const topic = `persistent://${uniqueNamespace()}/orders`;
      const record = auditRecord(topic, 42, { requestId: 'gateway#7#retry' });

      await auditLog.record(record);

      expect(await auditLog.list(topic, 1, 43)).toEqual([record]);
    });
  });
});

describe('in-memory fakes: injected storage faults', () => {
  const fault = () => new Error('injected: storage unavailable');

  it('a failed create propagates the error, creates nothing, and the fault fires once', async () => {
    const cursorStore = new InMemoryCursorStore();
    const error = fault();
    cursorStore.failNext('create', error);

    await expect(cursorStore.create('c', Position.beforeFirst(1n))).rejects.toBe(error);

    expect(await cursorStore.load('c')).toBeUndefined();
    await cursorStore.create('c', Position.beforeFirst(1n));
    expect(await cursorStore.load('c')).toEqual({
      markDeletePosition: Position.beforeFirst(1n),
      acknowledged: [],
    });
  });

  it('a failed acknowledge or markDelete leaves the cursor as it was; retrying acknowledges once', async () => {
    const cursorStore = new InMemoryCursorStore();
    await cursorStore.create('c', pos(1, 0));
    await cursorStore.acknowledge('c', [pos(1, 5)]);
    const before = await cursorStore.load('c');
    cursorStore.failNext('acknowledge', fault());
    cursorStore.failNext('markDelete', fault());

    await expect(cursorStore.acknowledge('c', [pos(1, 2), pos(1, 300)])).rejects.toThrow('injected');
    await expect(cursorStore.markDelete('c', pos(1, 6))).rejects.toThrow('injected');

    expect(await cursorStore.load('c')).toEqual(before);
    await cursorStore.acknowledge('c', [pos(1, 2), pos(1, 300)]);
    await cursorStore.acknowledge('c', [pos(1, 2)]);
    expect(texts((await cursorStore.load('c'))?.acknowledged)).toEqual(['1:2', '1:5', '1:300']);
  });

  it('a failed append allocates nothing: counters, ledgers and the next position are unchanged', async () => {
    const ledger = new InMemoryLedger(5);
    const partition = uniquePartition();
    await ledger.initialize(partition);
    await ledger.append(partition, [entry('a'), entry('b'), entry('c'), entry('d')], 1);
    const before = await ledger.state(partition);
    const error = fault();
    ledger.failNext('append', error);

    await expect(ledger.append(partition, [entry('e'), entry('f')], 2)).rejects.toBe(error);

    expect(await ledger.state(partition)).toEqual(before);
    const ledgerId = before?.ledgers[0]?.ledgerId ?? -1n;
    expect(await ledger.readEntry(pos(ledgerId, 4))).toBeUndefined();
    expect(texts((await ledger.append(partition, [entry('e')], 3)).positions)).toEqual([`${ledgerId}:4`]);
  });

  it('faults queue per operation and leave the other operations working', async () => {
    const catalog = new InMemoryTopicCatalog();
    const permissions = new InMemoryPermissionStore();
    const partition = uniquePartition();
    catalog.failNext('createSubscription', fault());
    catalog.failNext('createSubscription', fault());
    permissions.failNext('grant', fault());
    const record: SubscriptionRecord = { name: 's', type: 'Shared', cursorId: 'c', createdAtMs: 1 };

    await expect(catalog.createSubscription(partition, record)).rejects.toThrow('injected');
    await expect(catalog.createSubscription(partition, record)).rejects.toThrow('injected');
    await expect(permissions.grant('t/ns', 'alice', ['consume'])).rejects.toThrow('injected');

    expect(await catalog.listSubscriptions(partition)).toEqual([]);
    expect(await permissions.list('t/ns')).toEqual({});
    await catalog.createSubscription(partition, record);
    expect(await catalog.getSubscription(partition, 's')).toEqual(record);
  });
});
