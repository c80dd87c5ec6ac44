import { describe, expect, it } from 'vitest';
import {
  InvalidLedgerLayoutError,
  LedgerIndex,
  type LedgerLayout,
} from '../../../shared/domain/ledger-layout.ts';
import { Position } from '../../../shared/domain/position.ts';

// Ledger 3: entries 0..2; ledger 5: empty; ledger 8: entries 0..1; ledger 9: empty (current).
const layout: LedgerLayout = [
  { ledgerId: 3n, entries: 3n },
  { ledgerId: 5n, entries: 0n },
  { ledgerId: 8n, entries: 2n },
  { ledgerId: 9n, entries: 0n },
];

const at = (text: string): Position => {
  const [ledgerId, entryId] = text.split(':');
  return entryId === '-1' ? Position.beforeFirst(BigInt(ledgerId!)) : Position.parse(text);
};

describe('LedgerIndex', () => {
  const index = new LedgerIndex(layout);

  it.each([
    ['1:7', 0n],
    ['3:-1', 0n],
    ['3:0', 1n],
    ['3:2', 3n],
    ['3:99', 3n],
    ['4:0', 3n],
    ['5:-1', 3n],
    ['8:-1', 3n],
    ['8:0', 4n],
    ['8:1', 5n],
    ['9:-1', 5n],
    ['9:0', 5n],
    ['100:0', 5n],
  ])('counts the entries at or before %s: %i', (position, expected) => {
    expect(index.ordinal(at(position))).toBe(expected);
  });

  it.each([
    [1n, '3:0'],
    [3n, '3:2'],
    [4n, '8:0'],
    [5n, '8:1'],
  ])('finds entry number %i at %s', (ordinal, expected) => {
    expect(index.positionAt(ordinal)?.toString()).toBe(expected);
  });

  it.each([[0n], [6n], [-1n]])('finds no entry number %i', (ordinal) => {
    expect(index.positionAt(ordinal)).toBeUndefined();
  });

  it('knows its entries and ledgers', () => {
    expect(index.totalEntries).toBe(5n);
    expect(index.hasEntry(at('3:2'))).toBe(true);
    expect(index.hasEntry(at('3:3'))).toBe(false);
    expect(index.hasEntry(at('5:0'))).toBe(false);
    expect(index.hasEntry(at('8:-1'))).toBe(false);
    expect(index.hasEntry(at('4:0'))).toBe(false);
    expect(index.hasLedger(5n)).toBe(true);
    expect(index.hasLedger(4n)).toBe(false);
    expect(index.firstLedgerId).toBe(3n);
    expect(index.lastLedgerId).toBe(9n);
    expect(index.lastEntry()?.toString()).toBe('8:1');
    expect(index.nextWritePosition().toString()).toBe('9:0');
  });

  it('has no last entry when nothing was written', () => {
    expect(new LedgerIndex([{ ledgerId: 1n, entries: 0n }]).lastEntry()).toBeUndefined();
  });

  it.each<[string, LedgerLayout]>([
    ['empty', []],
    [
      'descending',
      [
        { ledgerId: 5n, entries: 1n },
        { ledgerId: 3n, entries: 1n },
      ],
    ],
    [
      'repeated',
      [
        { ledgerId: 5n, entries: 1n },
        { ledgerId: 5n, entries: 1n },
      ],
    ],
    ['negative id', [{ ledgerId: -1n, entries: 1n }]],
    ['negative size', [{ ledgerId: 1n, entries: -1n }]],
  ])('rejects a layout that is %s', (_name, bad) => {
    expect(() => new LedgerIndex(bad)).toThrow(InvalidLedgerLayoutError);
  });
});
