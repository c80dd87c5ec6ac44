import { describe, expect, it } from 'vitest';
import {
  javaStringHash,
  partitionForKey,
  RoundRobinRouter,
  signSafeMod,
} from '../../../shared/domain/message-router.ts';

describe('message router', () => {
  it.each([
    ['', 0],
    ['a', 97],
    ['hello', 99162322],
    ['key-1', 101943363],
    ['polygenelubricants', -2147483648],
    ['ünïcødé', javaStringHash('ünïcødé')],
  ])('javaStringHash(%j) = %d (Java String.hashCode)', (key, expected) => {
    expect(javaStringHash(key)).toBe(expected);
  });

  it.each([
    [-7, 3, 2],
    [7, 3, 1],
    [-2147483648, 5, 2],
  ])('signSafeMod(%d, %d) = %d', (dividend, divisor, expected) => {
    expect(signSafeMod(dividend, divisor)).toBe(expected);
  });

  it('sends every message of a key to the same partition', () => {
    const partitions = new Set(Array.from({ length: 20 }, () => partitionForKey('order-42', 7)));
    expect(partitions.size).toBe(1);
    expect(partitionForKey('polygenelubricants', 4)).toBe(0);
  });

  it('spreads keyless messages round-robin from the injected start', () => {
    const router = new RoundRobinRouter(2);
    expect(Array.from({ length: 5 }, () => router.choose(3))).toEqual([2, 0, 1, 2, 0]);
  });
});
