import { describe, expect, it } from 'vitest';
import { Cursor } from '../../../shared/domain/cursor.ts';
import type { LedgerLayout } from '../../../shared/domain/ledger-layout.ts';
import { PositionNotFoundError } from '../../../shared/domain/ledger-layout.ts';
import { Position } from '../../../shared/domain/position.ts';
import { Random } from '../../support/random.ts';

/**
 * The obvious, slow cursor: every entry of the layout in a list, a set of acknowledged entries
 * after the mark-delete position, and a walk to move the mark-delete over acknowledged entries.
 */
class NaiveCursor {
  readonly entries: Position[] = [];
  private readonly entryKeys = new Set<string>();
  private readonly ledgerIds = new Set<bigint>();
  private readonly acked = new Set<string>();
  /** How many entries of `entries` are at or before the mark-delete position. */
  private doneCount = 0;

  constructor(
    layout: LedgerLayout,
    public markDeletePosition: Position,
  ) {
    for (const { ledgerId, entries } of layout) {
      this.ledgerIds.add(ledgerId);
      for (let entryId = 0n; entryId < entries; entryId++) {
        this.entries.push(Position.of(ledgerId, entryId));
        this.entryKeys.add(`${ledgerId}:${entryId}`);
      }
    }
    this.doneCount = this.entries.filter((entry) => entry.compareTo(markDeletePosition) <= 0).length;
  }

  isEntry(position: Position): boolean {
    return this.entryKeys.has(position.toString());
  }

  acknowledge(position: Position): boolean | 'not found' {
    if (position.compareTo(this.markDeletePosition) <= 0) {
      return false;
    }
    if (!this.isEntry(position)) {
      return 'not found';
    }
    if (this.acked.has(position.toString())) {
      return false;
    }
    this.acked.add(position.toString());
    this.advance();
    return true;
  }

  markDelete(position: Position): boolean | 'not found' {
    if (position.compareTo(this.markDeletePosition) <= 0) {
      return false;
    }
    const valid = position.isBeforeFirst ? this.ledgerIds.has(position.ledgerId) : this.isEntry(position);
    if (!valid) {
      return 'not found';
    }
    this.markDeletePosition = position;
    this.doneCount = this.entries.filter((entry) => entry.compareTo(position) <= 0).length;
    for (const key of this.acked) {
      if (Position.parse(key).compareTo(position) <= 0) {
        this.acked.delete(key);
      }
    }
    this.advance();
    return true;
  }

  isAcknowledged(position: Position): boolean {
    return position.compareTo(this.markDeletePosition) <= 0 || this.acked.has(position.toString());
  }

  /** The first `count` unacknowledged entries after the mark-delete position. */
  backlogFront(count: number): Position[] {
    const front: Position[] = [];
    for (let i = this.doneCount; i < this.entries.length && front.length < count; i++) {
      const entry = this.entries[i]!;
      if (!this.acked.has(entry.toString())) {
        front.push(entry);
      }
    }
    return front;
  }

  backlogPositions(): Position[] {
    return this.entries.slice(this.doneCount).filter((entry) => !this.acked.has(entry.toString()));
  }

  backlog(): number {
    return this.entries.length - this.doneCount - this.acked.size;
  }

  ackedPositions(): Position[] {
    return this.entries.filter((entry) => this.acked.has(entry.toString()));
  }

  /** Pulsar's rendering, built the slow way: one range per run of consecutive entries of a ledger. */
  individuallyDeletedMessages(): string {
    const ranges: string[] = [];
    let start: Position | undefined;
    let end: Position | undefined;
    for (const entry of this.ackedPositions()) {
      if (end !== undefined && entry.ledgerId === end.ledgerId && entry.entryId === end.entryId + 1n) {
        end = entry;
        continue;
      }
      if (start !== undefined && end !== undefined) {
        ranges.push(`(${start.ledgerId}:${start.entryId - 1n}..${end}]`);
      }
      start = entry;
      end = entry;
    }
    if (start !== undefined && end !== undefined) {
      ranges.push(`(${start.ledgerId}:${start.entryId - 1n}..${end}]`);
    }
    return `[${ranges.join(',')}]`;
  }

  private advance(): void {
    for (;;) {
      const next = this.entries[this.doneCount];
      if (next === undefined || !this.acked.delete(next.toString())) {
        return;
      }
      this.markDeletePosition = next;
      this.doneCount += 1;
    }
  }
}

function randomLayout(random: Random): LedgerLayout {
  const count = random.intBetween(3, 6);
  const emptyAt = random.int(count);
  const layout: { ledgerId: bigint; entries: bigint }[] = [];
  let ledgerId = BigInt(random.intBetween(0, 5));
  for (let i = 0; i < count; i++) {
    ledgerId += BigInt(random.intBetween(1, 3));
    const entries =
      i === emptyAt ? 0 : random.chance(0.15) ? random.intBetween(0, 2) : random.intBetween(1, 150);
    layout.push({ ledgerId, entries: BigInt(entries) });
  }
  return layout;
}

/** Mostly written entries, sometimes a neighbour that was never written or a ledger not in the layout. */
function randomPosition(random: Random, layout: LedgerLayout): Position {
  const ledger = random.pick(layout);
  const ledgerId = random.chance(0.03) ? ledger.ledgerId + 1n : ledger.ledgerId;
  const entryId = random.int(Number(ledger.entries) + 2);
  return Position.of(ledgerId, BigInt(entryId));
}

/** `expect` is slow in a hot loop: only call it when the values differ, with context to debug. */
function agree<T>(actual: T, expected: T, context: () => string): void {
  if (!Object.is(actual, expected)) {
    expect(actual, context()).toBe(expected);
  }
}

function outcome(act: () => boolean): boolean | 'not found' {
  try {
    return act();
  } catch (error) {
    if (error instanceof PositionNotFoundError) {
      return 'not found';
    }
    throw error;
  }
}

describe('Cursor against a naive model', () => {
  it('agrees over 100,000 random operations', () => {
    const random = new Random(0xac4e);
    let operations = 0;
    let episodes = 0;

    while (operations < 100_000) {
      // Arrange: a fresh partition and subscription
      episodes += 1;
      const layout = randomLayout(random);
      const startAtLatest = random.chance(0.05);
      let cursor = startAtLatest ? Cursor.atLatest(layout) : Cursor.atEarliest(layout);
      const model = new NaiveCursor(layout, cursor.markDeletePosition);
      expect(model.backlog()).toBe(startAtLatest ? 0 : model.entries.length);

      for (let step = 0; step < 2000 && operations < 100_000; step++, operations++) {
        // Act
        const roll = random.next();
        if (roll < 0.75) {
          // Mostly random entries; sometimes the first ones of the backlog, so the mark-delete moves.
          const front = model.backlogFront(3);
          const position =
            front.length > 0 && random.chance(0.2) ? random.pick(front) : randomPosition(random, layout);
          agree(
            outcome(() => cursor.acknowledge(position)),
            model.acknowledge(position),
            () => `acknowledge ${position}`,
          );
        } else if (roll < 0.78) {
          const position = random.chance(0.2)
            ? Position.beforeFirst(random.pick(layout).ledgerId + (random.chance(0.2) ? 1n : 0n))
            : randomPosition(random, layout);
          agree(
            outcome(() => cursor.markDelete(position)),
            model.markDelete(position),
            () => `markDelete ${position}`,
          );
        } else if (roll < 0.79) {
          // Persist and reload, as every request does
          cursor = new Cursor({
            layout,
            markDeletePosition: cursor.markDeletePosition,
            acknowledged: random.chance(0.5) ? cursor.acknowledgedRanges() : model.ackedPositions(),
          });
        } else {
          const probe = randomPosition(random, layout);
          agree(cursor.isAcknowledged(probe), model.isAcknowledged(probe), () => `isAcknowledged ${probe}`);
        }

        // Assert
        const context = () =>
          `episode ${episodes}, step ${step}, layout ${JSON.stringify(layout, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))}`;
        agree(cursor.markDeletePosition.toString(), model.markDeletePosition.toString(), context);
        agree(cursor.backlog(), model.backlog(), context);
        if (step % 10 === 0) {
          const backlog = model.backlogPositions();
          expect(
            model.entries.map((entry) => cursor.isAcknowledged(entry)),
            context(),
          ).toEqual(model.entries.map((entry) => model.isAcknowledged(entry)));
          expect(cursor.individuallyDeletedMessages()).toBe(model.individuallyDeletedMessages());
          const n = random.intBetween(1, backlog.length + 2);
          expect(cursor.nthBacklogPosition(n)?.toString()).toBe(backlog[n - 1]?.toString());
          const take = random.int(backlog.length + 3);
          expect(cursor.firstBacklogPositions(take).map(String)).toEqual(backlog.slice(0, take).map(String));
          const from = random.chance(0.2) ? cursor.markDeletePosition : randomPosition(random, layout);
          const later = backlog.filter((position) => position.compareTo(from) > 0);
          const count = random.int(later.length + 3);
          expect(cursor.backlogPositionsAfter(from, count).map(String), `after ${from}`).toEqual(
            later.slice(0, count).map(String),
          );
          // The entry right after the mark-delete position, or where the next write goes.
          const after = model.entries.find((entry) => entry.compareTo(model.markDeletePosition) > 0);
          const last = layout[layout.length - 1]!;
          expect(cursor.readPosition.toString()).toBe(
            (after ?? Position.of(last.ledgerId, last.entries)).toString(),
          );
        }
      }
    }

    expect(operations).toBe(100_000);
    expect(episodes).toBeGreaterThan(40);
  }, 30_000);
});
