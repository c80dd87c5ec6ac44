import { describe, expect, it } from 'vitest';
import { AckRange } from '../../../shared/domain/ack-range.ts';
import { InvalidPositionError } from '../../../shared/domain/non-negative-id.ts';
import { Position } from '../../../shared/domain/position.ts';

describe('AckRange', () => {
  it('holds one entry when built from a position', () => {
    // Act
    const range = AckRange.of(Position.of(3n, 0n));

    // Assert
    expect(range.toString()).toBe('(3:-1..3:0]');
    expect(range.count).toBe(1n);
    expect(range.contains(Position.of(3n, 0n))).toBe(true);
    expect(range.contains(Position.beforeFirst(3n))).toBe(false);
  });

  it('is open below and closed above', () => {
    // Arrange
    const range = new AckRange(Position.of(3n, 4n), Position.of(3n, 7n));

    // Act
    const contained = [3n, 4n, 5n, 7n, 8n].map((entryId) => range.contains(Position.of(3n, entryId)));

    // Assert
    expect(contained).toEqual([false, false, true, true, false]);
    expect(range.contains(Position.of(4n, 5n))).toBe(false);
    expect(range.count).toBe(3n);
    expect(range.ledgerId).toBe(3n);
    expect(range.toString()).toBe('(3:4..3:7]');
  });

  it.each([
    [Position.of(3n, 4n), Position.of(3n, 4n)],
    [Position.of(3n, 5n), Position.of(3n, 4n)],
    [Position.of(3n, 4n), Position.of(4n, 5n)],
  ])('rejects (%s..%s]', (lower, upper) => {
    expect(() => new AckRange(lower, upper)).toThrow(InvalidPositionError);
  });

  it('rejects a range of a before-first position', () => {
    expect(() => AckRange.of(Position.beforeFirst(3n))).toThrow(InvalidPositionError);
  });

  it('compares by value', () => {
    expect(
      AckRange.of(Position.of(1n, 1n)).equals(new AckRange(Position.of(1n, 0n), Position.of(1n, 1n))),
    ).toBe(true);
    expect(AckRange.of(Position.of(1n, 1n)).equals(AckRange.of(Position.of(1n, 2n)))).toBe(false);
  });
});
