import { describe, expect, it } from 'vitest';
import { BatchItemTooLargeError, splitIntoBatches } from '../../../shared/domain/batches.ts';
import { Random } from '../../support/random.ts';

const KIB = 1024;
const MIB = 1024 * KIB;
/** SQS SendMessageBatch as AWS documents it. */
const SQS_BATCH = { maxCount: 10, maxBytes: MIB };

/** Items are their own sizes: the batches read as lists of sizes. */
const split = (sizes: number[], limits = SQS_BATCH) => splitIntoBatches(sizes, limits, (size) => size);

describe('splitIntoBatches', () => {
  it.each<[string, number[], number[][]]>([
    ['nothing', [], []],
    ['one small item', [10], [[10]]],
    ['ten small items: one batch', Array(10).fill(1), [Array(10).fill(1)]],
    ['eleven small items: ten and one', Array(11).fill(1), [Array(10).fill(1), [1]]],
    // The first bug report: ten 120 KiB messages are 1.17 MiB, over SendMessageBatch's 1 MiB.
    [
      'ten 120 KiB items: eight and two',
      Array(10).fill(120 * KIB),
      [Array(8).fill(120 * KIB), Array(2).fill(120 * KIB)],
    ],
    ['four 256 KiB items fill 1 MiB exactly', Array(4).fill(256 * KIB), [Array(4).fill(256 * KIB)]],
    ['five 256 KiB items: four and one', Array(5).fill(256 * KIB), [Array(4).fill(256 * KIB), [256 * KIB]]],
    ['one item of exactly 1 MiB', [MIB], [[MIB]]],
    ['a byte over closes the batch', [MIB - 1, 1, 1], [[MIB - 1, 1], [1]]],
    ['a big item after small ones starts a batch', [1, 2, MIB], [[1, 2], [MIB]]],
    ['zero-byte items count toward the count limit', Array(12).fill(0), [Array(10).fill(0), [0, 0]]],
  ])('%s', (_, sizes, expected) => {
    expect(split(sizes)).toEqual(expected);
  });

  it.each<[string, { maxCount: number; maxBytes: number }, number[], number[][]]>([
    [
      'BatchWriteItem: 25 items',
      { maxCount: 25, maxBytes: 16 * MIB },
      Array(26).fill(1),
      [Array(25).fill(1), [1]],
    ],
    ['one item per batch', { maxCount: 1, maxBytes: 100 }, [5, 6], [[5], [6]]],
    [
      'bytes bind before count',
      { maxCount: 100, maxBytes: 10 },
      [4, 4, 4, 4],
      [
        [4, 4],
        [4, 4],
      ],
    ],
  ])('other limits: %s', (_, limits, sizes, expected) => {
    expect(split(sizes, limits)).toEqual(expected);
  });

  it('refuses an item larger than a whole batch, naming it', () => {
    expect(() => split([1, MIB + 1])).toThrow(BatchItemTooLargeError);
    expect(() => split([1, MIB + 1])).toThrow(/Item 1 is 1048577 bytes/);
  });

  it.each<[number, number]>([
    [0, MIB],
    [10, 0],
    [1.5, MIB],
    [10, Number.NaN],
  ])('refuses limits of %s items and %s bytes', (maxCount, maxBytes) => {
    expect(() => split([1], { maxCount, maxBytes })).toThrow(RangeError);
  });

  it('sizes each item once', () => {
    let calls = 0;
    splitIntoBatches(['a', 'b', 'c'], SQS_BATCH, () => {
      calls++;
      return 1;
    });
    expect(calls).toBe(3);
  });

  // fast-check is not a dependency (yet): the same property over seeded random inputs instead.
  it.each(
    Array.from({ length: 200 }, (_, seed) => [seed]),
  )('property (seed %i): no batch over either limit, order kept, nothing lost or repeated, no batch could take the next item', (seed) => {
    const random = new Random(seed);
    const limits = { maxCount: random.intBetween(1, 30), maxBytes: random.intBetween(1, 5000) };
    const items = Array.from({ length: random.int(120) }, (_, id) => ({
      id,
      size: random.chance(0.1) ? limits.maxBytes : random.int(limits.maxBytes + 1),
    }));

    const batches = splitIntoBatches(items, limits, (item) => item.size);

    const total = (batch: readonly { size: number }[]) => batch.reduce((sum, item) => sum + item.size, 0);
    for (const batch of batches) {
      expect(batch.length).toBeGreaterThan(0);
      expect(batch.length).toBeLessThanOrEqual(limits.maxCount);
      expect(total(batch)).toBeLessThanOrEqual(limits.maxBytes);
    }
    expect(batches.flat().map((item) => item.id)).toEqual(items.map((item) => item.id));
    // Greedy: a batch was closed only because its successor's first item would not fit.
    batches.slice(0, -1).forEach((batch, index) => {
      const next = batches[index + 1]?.[0];
      expect(batch.length === limits.maxCount || total(batch) + (next?.size ?? 0) > limits.maxBytes).toBe(
        true,
      );
    });
  });
});
