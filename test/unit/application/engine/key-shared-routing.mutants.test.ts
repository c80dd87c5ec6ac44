import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ENGINE_LIMITS,
  type EngineContext,
  type KeySharedMember,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import {
  JOIN_PENDING_MS,
  joinPending,
  keySharedJoined,
  keySharedJoinMark,
  memberForKey,
  POINTS_PER_MEMBER,
  routesTo,
} from '../../../../shared/application/engine/key-shared-routing.ts';
import { newDispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { NotFoundError, ServiceUnavailableError } from '../../../../shared/domain/errors.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { LedgerInfo, ManagedLedgerState, StoredEntry } from '../../../../shared/ports/ledger.ts';
import { engineWorld, RacedStore } from '../../../support/engine-world.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Key_Shared routing's edges (mutation testing, issue 21 criterion 5): ring points shared by two
// members, keys that hash exactly onto a point, the recently joined rule, and the join mark.

const member = (consumerId: string, joinedAfter = Position.beforeFirst(1n)): KeySharedMember => ({
  consumerId,
  joinedAfter,
});

/** The key whose hash is point `i` of `consumerId` (a ring point hashes `consumerId NUL i`). */
const pointKey = (consumerId: string, i: number) => `${consumerId}\0${i}`;

describe('memberForKey', () => {
  it('has no member for an empty list', () => {
    expect(memberForKey([], 'k')).toBeUndefined();
  });

  it('gives a key hashing exactly onto a member’s point to that member', () => {
    const list = ['alpha', 'bravo', 'charlie'].map((id) => member(id));
    for (const { consumerId } of list) {
      for (let i = 0; i < POINTS_PER_MEMBER; i += 7) {
        expect(memberForKey(list, pointKey(consumerId, i))?.consumerId).toBe(consumerId);
      }
    }
  });

  // Murmur3 (31 bits) gives point 72 of m179 and point 95 of m531 the same hash, 1353065222
  // (found by search): a tie on the ring goes to the lower member id, whatever the list's order.
  it('breaks a tie between two members’ points by the lower member id, in any list order', () => {
    const key = pointKey('m179', 72);
    expect(memberForKey([member('m531'), member('m179')], key)?.consumerId).toBe('m179');
    expect(memberForKey([member('m179'), member('m531')], key)?.consumerId).toBe('m179');
    expect(memberForKey([member('m531'), member('m179')], pointKey('m531', 95))?.consumerId).toBe('m179');
  });
});

/** An entry of the ledger, as the dispatcher reads it. */
const entry = (position: Position, key?: string): StoredEntry => ({
  position,
  payload: 'p',
  properties: {},
  publishTimeMs: 0,
  ...(key !== undefined ? { key } : {}),
});

describe('routesTo', () => {
  const head = (markDelete: Position) => newDispatchHead(markDelete, Position.of(1, 50));

  it('lets anyone take an entry when there are no members', () => {
    expect(routesTo([], 'c0', entry(Position.of(1, 3), 'k'), head(Position.beforeFirst(1n)))).toBe(true);
  });

  it('gives a key to its member only', () => {
    const list = [member('alpha'), member('bravo')];
    const owner = memberForKey(list, 'k1')?.consumerId as string;
    const other = owner === 'alpha' ? 'bravo' : 'alpha';
    const e = entry(Position.of(1, 3), 'k1');
    expect(routesTo(list, owner, e, head(Position.beforeFirst(1n)))).toBe(true);
    expect(routesTo(list, other, e, head(Position.beforeFirst(1n)))).toBe(false);
  });

  it('routes an entry without a key by its position', () => {
    const list = [member('alpha'), member('bravo'), member('charlie')];
    const e = entry(Position.of(1, 3));
    const owner = memberForKey(list, '1:3')?.consumerId as string;
    for (const { consumerId } of list) {
      expect(routesTo(list, consumerId, e, head(Position.beforeFirst(1n)))).toBe(consumerId === owner);
    }
  });

  it('holds entries after a recently joined member’s mark until mark-delete reaches it', () => {
    const joinedAfter = Position.of(1, 10);
    const list = [member('alpha', joinedAfter)];
    // Before or at its mark: its own at once.
    expect(routesTo(list, 'alpha', entry(Position.of(1, 9), 'k'), head(Position.beforeFirst(1n)))).toBe(true);
    expect(routesTo(list, 'alpha', entry(Position.of(1, 10), 'k'), head(Position.beforeFirst(1n)))).toBe(
      true,
    );
    // After it: only once mark-delete is at the mark or past it.
    const later = entry(Position.of(1, 11), 'k');
    expect(routesTo(list, 'alpha', later, head(Position.of(1, 9)))).toBe(false);
    expect(routesTo(list, 'alpha', later, head(Position.of(1, 10)))).toBe(true);
    expect(routesTo(list, 'alpha', later, head(Position.of(1, 12)))).toBe(true);
  });
});

const partition = TopicName.parse('persistent://public/default/join-mark');
const cursor: PartitionCursor = { partition, cursorId: 'c1', type: 'Key_Shared' };

/** A head at (markDelete, readPosition) over a ledger whose `state` answers `layout` when given. */
async function joinMarkOf(markDelete: Position, readPosition: Position, layout?: readonly LedgerInfo[]) {
  const ledger = new InMemoryLedger(250);
  if (layout) {
    // The port allows any layout of closed ledgers, empty ones included: answer this one.
    ledger.state = async (): Promise<ManagedLedgerState> => ({
      partition,
      ledgers: layout,
      msgInCounter: 0,
      bytesInCounter: 0,
      subscriptionsVersion: '',
    });
  }
  const store = new InMemoryDispatchStore();
  const ctx: EngineContext = { store, ledger, clock: new ManualClock(0), limits: DEFAULT_ENGINE_LIMITS };
  await store.createHead(cursor.cursorId, newDispatchHead(markDelete, readPosition));
  return (await keySharedJoinMark(ctx, cursor)).toString();
}

describe('keySharedJoinMark', () => {
  it('refuses a cursor without a head', async () => {
    const ctx: EngineContext = {
      store: new InMemoryDispatchStore(),
      ledger: new InMemoryLedger(250),
      clock: new ManualClock(0),
      limits: DEFAULT_ENGINE_LIMITS,
    };
    await expect(keySharedJoinMark(ctx, cursor)).rejects.toThrow(NotFoundError);
    await expect(keySharedJoinMark(ctx, cursor)).rejects.toThrow(/c1/);
  });

  it('is the entry before the read position within its ledger', async () => {
    expect(await joinMarkOf(Position.of(1, 1), Position.of(1, 5))).toBe('1:4');
  });

  it('is mark-delete when nothing after it was dispatched', async () => {
    expect(await joinMarkOf(Position.of(1, 4), Position.of(1, 5))).toBe('1:4');
    expect(
      await joinMarkOf(Position.beforeFirst(1n), Position.of(1, 0), [{ ledgerId: 1n, entries: 9n }]),
    ).toBe('1:-1');
  });

  it('is the last entry of the last non-empty ledger before the read position’s ledger', async () => {
    const layout: LedgerInfo[] = [
      { ledgerId: 1n, entries: 250n },
      { ledgerId: 2n, entries: 0n },
      { ledgerId: 3n, entries: 40n },
      { ledgerId: 4n, entries: 7n },
    ];
    expect(await joinMarkOf(Position.of(1, 3), Position.of(3, 0), layout)).toBe('1:249');
    expect(await joinMarkOf(Position.of(1, 3), Position.of(4, 0), layout)).toBe('3:39');
  });

  it('is mark-delete when it is past the previous ledger’s last entry', async () => {
    const layout: LedgerInfo[] = [
      { ledgerId: 1n, entries: 250n },
      { ledgerId: 2n, entries: 5n },
    ];
    expect(await joinMarkOf(Position.beforeFirst(2n), Position.of(2, 0), layout)).toBe('2:-1');
  });

  it('is mark-delete when the partition has no ledgers any more', async () => {
    expect(await joinMarkOf(Position.of(3, 9), Position.of(4, 0))).toBe('3:9');
  });
});

describe('keySharedJoinMark under contention', () => {
  const rounds = 4 * DEFAULT_ENGINE_LIMITS.casAttempts;

  it(`writes the joining member after ${rounds - 1} lost writes, pausing after each`, async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Key_Shared', store });
    await w.publish(3);
    await w.subscribe();
    const pauses: number[] = [];
    const ctx: EngineContext = { ...w.ctx, pauseAfterConflict: async (attempt) => void pauses.push(attempt) };
    store.lose.head = rounds - 1;
    expect((await keySharedJoinMark(ctx, w.cursor, 'j')).toString()).toBe('1:-1');
    expect((await w.store.readHead(w.cursor.cursorId))?.head.joining?.[0]?.consumerId).toBe('j');
    expect(pauses).toEqual(Array.from({ length: rounds - 1 }, (_, i) => i));
  });

  it(`gives up after ${rounds} lost writes: the subscription is too busy, try again`, async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Key_Shared', store });
    await w.subscribe();
    store.lose.head = rounds;
    await expect(keySharedJoinMark(w.ctx, w.cursor, 'j')).rejects.toThrow(
      new ServiceUnavailableError('Cursor c1 is too busy to join now; try again'),
    );
    expect((await w.store.readHead(w.cursor.cursorId))?.head.joining ?? []).toEqual([]);
  });
});

describe('keySharedJoined', () => {
  const joined = async (store = new RacedStore()) => {
    const w = engineWorld({ type: 'Key_Shared', store });
    await w.subscribe();
    await keySharedJoinMark(w.ctx, w.cursor, 'j');
    const joining = async () => (await w.store.readHead(w.cursor.cursorId))?.head.joining?.[0]?.consumerId;
    return { w, store, joining };
  };

  it('clears the mark of the member it names, and says so', async () => {
    const { w, joining } = await joined();
    expect(await keySharedJoined(w.ctx, w.cursor, 'j')).toBe(true);
    expect(await joining()).toBeUndefined();
    // Nothing left to clear: no write.
    const version = (await w.store.readHead(w.cursor.cursorId))?.version;
    expect(await keySharedJoined(w.ctx, w.cursor, 'j')).toBe(false);
    expect((await w.store.readHead(w.cursor.cursorId))?.version).toBe(version);
  });

  it('leaves the mark of another member joining', async () => {
    const { w, joining } = await joined();
    expect(await keySharedJoined(w.ctx, w.cursor, 'k')).toBe(false);
    expect(await joining()).toBe('j');
  });

  it('answers false for a subscription that is gone', async () => {
    const { w } = await joined();
    await w.store.deleteCursor(w.cursor.cursorId);
    expect(await keySharedJoined(w.ctx, w.cursor, 'j')).toBe(false);
  });

  it(`tries ${DEFAULT_ENGINE_LIMITS.casAttempts} times, then leaves the mark to lapse`, async () => {
    const { w, store, joining } = await joined();
    store.lose.head = DEFAULT_ENGINE_LIMITS.casAttempts;
    expect(await keySharedJoined(w.ctx, w.cursor, 'j')).toBe(false);
    expect(await joining()).toBe('j');
    store.lose.head = DEFAULT_ENGINE_LIMITS.casAttempts - 1;
    expect(await keySharedJoined(w.ctx, w.cursor, 'j')).toBe(true);
    expect(await joining()).toBeUndefined();
  });
});

describe('joinPending', () => {
  const joiningHead = {
    ...newDispatchHead(Position.beforeFirst(1n), Position.of(1, 0)),
    joining: [{ consumerId: 'j', atMs: 1_000 }],
  };

  it(`holds a list without the joining member back for ${JOIN_PENDING_MS} ms, not after`, () => {
    expect(joinPending(joiningHead, [member('a')], 1_000 + JOIN_PENDING_MS)).toBe(true);
    expect(joinPending(joiningHead, [member('a')], 1_000 + JOIN_PENDING_MS + 1)).toBe(false);
    expect(joinPending(joiningHead, [member('a'), member('j')], 1_000)).toBe(false);
    expect(joinPending(joiningHead, undefined, 1_000)).toBe(false);
  });
});
