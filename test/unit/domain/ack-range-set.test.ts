import { describe, expect, it } from 'vitest';
import { AckRange } from '../../../shared/domain/ack-range.ts';
import { AckRangeSet } from '../../../shared/domain/ack-range-set.ts';
import { InvalidPositionError } from '../../../shared/domain/non-negative-id.ts';
import { Position } from '../../../shared/domain/position.ts';
import { Random } from '../../support/random.ts';

const p = (text: string): Position => Position.parse(text);

/** `'3:5'` is one position, `'3:4..3:7'` the range (3:4..3:7], `'3:-1..3:2'` from the first entry. */
function item(text: string): Position | AckRange {
  const [lower, upper] = text.split('..');
  if (upper === undefined) {
    return p(text);
  }
  const [ledgerId, entryId] = lower!.split(':');
  const lowerPosition =
    entryId === '-1' ? Position.beforeFirst(BigInt(ledgerId!)) : Position.of(ledgerId!, entryId!);
  return new AckRange(lowerPosition, p(upper));
}

function setOf(...items: string[]): AckRangeSet {
  return AckRangeSet.of(items.map(item));
}

describe('AckRangeSet', () => {
  it.each([
    // what is added, in order -> the set, Pulsar-style
    [[], '[]', 0],
    [['3:5'], '[(3:4..3:5]]', 1],
    [['3:5', '3:6'], '[(3:4..3:6]]', 2],
    [['3:6', '3:5'], '[(3:4..3:6]]', 2],
    [['3:5', '3:7'], '[(3:4..3:5],(3:6..3:7]]', 2],
    [['3:5', '3:7', '3:6'], '[(3:4..3:7]]', 3],
    [['3:0'], '[(3:-1..3:0]]', 1],
    [['3:5', '3:5'], '[(3:4..3:5]]', 1],
    [['3:9', '3:5', '4:0', '2:7'], '[(2:6..2:7],(3:4..3:5],(3:8..3:9],(4:-1..4:0]]', 4],
    // ranges are ledger-local: the last entry of ledger 3 never merges with ledger 4
    [['3:9', '4:0'], '[(3:8..3:9],(4:-1..4:0]]', 2],
    [['3:4..3:7', '3:7..3:9'], '[(3:4..3:9]]', 5],
    [['3:4..3:7', '3:2..3:4'], '[(3:2..3:7]]', 5],
    [['3:4..3:7', '3:1..3:3'], '[(3:1..3:3],(3:4..3:7]]', 5],
    [['3:4..3:7', '3:5..3:6'], '[(3:4..3:7]]', 3],
    [['3:4..3:7', '3:0..3:20'], '[(3:0..3:20]]', 20],
    [['3:1', '3:3', '3:5', '3:7', '3:0..3:6'], '[(3:0..3:7]]', 7],
    // 3:2 is not acknowledged, so (3:0..3:1] stays apart
    [['3:1', '3:3', '3:5', '3:9', '3:2..3:6'], '[(3:0..3:1],(3:2..3:6],(3:8..3:9]]', 6],
    [['3:-1..3:2', '3:10'], '[(3:-1..3:2],(3:9..3:10]]', 4],
  ])('adding %j gives %s holding %i positions', (added, rendered, cardinality) => {
    // Act
    const set = setOf(...added);

    // Assert
    expect(set.toString()).toBe(rendered);
    expect(set.cardinality()).toBe(cardinality);
    expect(set.size()).toBe(rendered === '[]' ? 0 : rendered.split('],(').length);
  });

  it('reports whether an add changed the set', () => {
    // Arrange
    const set = setOf('3:4..3:7');

    // Act & Assert
    expect(set.add(p('3:6'))).toBe(false);
    expect(set.add(item('3:5..3:7'))).toBe(false);
    expect(set.add(p('3:8'))).toBe(true);
    expect(set.add(item('3:2..3:6'))).toBe(true);
    expect(set.toString()).toBe('[(3:2..3:8]]');
  });

  it.each([
    ['3:4', false],
    ['3:5', true],
    ['3:7', true],
    ['3:8', false],
    ['3:9', false],
    ['3:10', true],
    ['3:11', false],
    ['2:5', false],
    ['4:5', false],
    ['5:0', true],
  ])('contains(%s) is %s', (position, expected) => {
    expect(setOf('3:4..3:7', '3:10', '5:0').contains(p(position))).toBe(expected);
  });

  it('rejects adding a before-first position', () => {
    expect(() => new AckRangeSet().add(Position.beforeFirst(3n))).toThrow(InvalidPositionError);
  });

  it.each([
    ['2:100', '[(3:4..3:7],(3:9..3:10],(5:-1..5:2]]', 7],
    ['3:4', '[(3:4..3:7],(3:9..3:10],(5:-1..5:2]]', 7],
    ['3:5', '[(3:5..3:7],(3:9..3:10],(5:-1..5:2]]', 6],
    ['3:7', '[(3:9..3:10],(5:-1..5:2]]', 4],
    ['3:8', '[(3:9..3:10],(5:-1..5:2]]', 4],
    ['4:0', '[(5:-1..5:2]]', 3],
    ['5:-1', '[(5:-1..5:2]]', 3],
    ['5:0', '[(5:0..5:2]]', 2],
    ['5:2', '[]', 0],
    ['9:0', '[]', 0],
  ])('removeAtMost(%s) leaves %s', (position, rendered, cardinality) => {
    // Arrange
    const set = setOf('3:4..3:7', '3:10', '5:-1..5:2');
    const [ledgerId, entryId] = position.split(':');
    const bound = entryId === '-1' ? Position.beforeFirst(BigInt(ledgerId!)) : p(position);

    // Act
    set.removeAtMost(bound);

    // Assert
    expect(set.toString()).toBe(rendered);
    expect(set.cardinality()).toBe(cardinality);
  });

  it('gives the first and last ranges', () => {
    // Arrange
    const set = setOf('3:10', '3:4..3:7', '5:0');

    // Act & Assert
    expect(set.firstRange()?.toString()).toBe('(3:4..3:7]');
    expect(set.lastRange()?.toString()).toBe('(5:-1..5:0]');
    expect(new AckRangeSet().firstRange()).toBeUndefined();
    expect(new AckRangeSet().lastRange()).toBeUndefined();
  });

  it('visits ranges in order and can stop early', () => {
    // Arrange
    const set = setOf('3:10', '3:4..3:7', '5:0');
    const all: string[] = [];
    const firstTwo: string[] = [];

    // Act
    set.forEach((range) => {
      all.push(range.toString());
    });
    set.forEachWhile((range) => firstTwo.push(range.toString()) < 2);

    // Assert
    expect(all).toEqual(['(3:4..3:7]', '(3:9..3:10]', '(5:-1..5:0]']);
    expect(firstTwo).toEqual(['(3:4..3:7]', '(3:9..3:10]']);
    expect(set.ranges().map(String)).toEqual(all);
  });

  it('clones independently', () => {
    // Arrange
    const set = setOf('3:4..3:7');
    const copy = set.clone();

    // Act
    copy.add(p('3:8'));
    set.removeAtMost(p('3:5'));

    // Assert
    expect(set.toString()).toBe('[(3:5..3:7]]');
    expect(copy.toString()).toBe('[(3:4..3:8]]');
  });

  it('keeps ids above 2^53 exact', () => {
    // Act
    const set = setOf('9007199254740993:9007199254740993', '9007199254740993:9007199254740994');

    // Assert
    expect(set.toString()).toBe('[(9007199254740993:9007199254740992..9007199254740993:9007199254740994]]');
    expect(set.contains(p('9007199254740993:9007199254740992'))).toBe(false);
  });

  it('matches a naive set of positions under random adds and removals', () => {
    // Arrange
    const random = new Random(20240611);
    const set = new AckRangeSet();
    const model = new Set<string>();
    const ledgers = [1n, 2n, 5n];
    const entriesPerLedger = 60;
    const randomPosition = (): Position => Position.of(random.pick(ledgers), random.int(entriesPerLedger));
    let floor = Position.beforeFirst(0n);

    for (let step = 0; step < 20_000; step++) {
      // Act
      if (random.chance(0.01)) {
        floor = randomPosition();
        set.removeAtMost(floor);
        for (const key of model) {
          if (p(key).compareTo(floor) <= 0) {
            model.delete(key);
          }
        }
      } else if (random.chance(0.2)) {
        const ledgerId = random.pick(ledgers);
        const lower = random.int(entriesPerLedger) - 1;
        const upper = lower + 1 + random.int(5);
        set.add(item(`${ledgerId}:${lower}..${ledgerId}:${upper}`));
        for (let entryId = lower + 1; entryId <= upper; entryId++) {
          model.add(`${ledgerId}:${entryId}`);
        }
      } else {
        const position = randomPosition();
        set.add(position);
        model.add(position.toString());
      }

      // Assert
      const probe = randomPosition();
      expect(set.contains(probe)).toBe(model.has(probe.toString()));
      expect(set.cardinality()).toBe(model.size);
    }
    const expanded: string[] = [];
    let previous: AckRange | undefined;
    for (const range of set.ranges()) {
      // sorted, disjoint and never adjacent in one ledger
      if (previous !== undefined && previous.ledgerId === range.ledgerId) {
        expect(range.lowerExclusive.entryId).toBeGreaterThan(previous.upperInclusive.entryId);
      }
      previous = range;
      for (
        let entryId = range.lowerExclusive.entryId + 1n;
        entryId <= range.upperInclusive.entryId;
        entryId++
      ) {
        expanded.push(`${range.ledgerId}:${entryId}`);
      }
    }
    expect(expanded.sort()).toEqual([...model].sort());
  });

  it('holds 500,000 disjoint ranges', () => {
    // Arrange
    const set = new AckRangeSet();
    const count = 500_000;

    // Act: every other entry, in order (the common case), then fill every other hole at random
    for (let i = 0; i < count; i++) {
      set.add(Position.of(7n, BigInt(2 * i)));
    }
    const sizeAfterAppend = set.size();
    const holes = new Random(7).shuffle(Array.from({ length: 1000 }, (_, i) => 4 * i + 1));
    for (const hole of holes) {
      set.add(Position.of(7n, BigInt(hole)));
    }

    // Assert
    expect(sizeAfterAppend).toBe(count);
    expect(set.size()).toBe(count - 1000);
    expect(set.cardinality()).toBe(count + 1000);
    expect(set.contains(Position.of(7n, 999_998n))).toBe(true);
    expect(set.contains(Position.of(7n, 999_997n))).toBe(false);
    expect(set.contains(Position.of(7n, 5n))).toBe(true);
    expect(set.firstRange()?.toString()).toBe('(7:-1..7:2]');

    // Act: consume from the front, as a cursor's mark-delete position does
    for (let i = 0; i < count; i += 2) {
      set.removeAtMost(Position.of(7n, BigInt(2 * i)));
    }

    // Assert
    expect(set.isEmpty()).toBe(false);
    expect(set.cardinality()).toBe(1);
    expect(set.toString()).toBe('[(7:999997..7:999998]]');
    // A size test: 0.5 s on an idle machine, past 5 s on a 2-core one running other work too.
  }, 30_000);
});
