import { describe, expect, it } from 'vitest';
import { holds, publishAllowed } from '../../../shared/domain/producer-access.ts';

// Producer access modes (issue 23): who may append while an exclusive producer holds a partition.
const holder = { producerId: 'a', producerName: 'leader', topicEpoch: 3, leaseUntilMs: 1_000 };

describe('producer access: the holder and its lease', () => {
  it.each([
    [999, true],
    [1_000, true],
    [1_001, false],
  ])('at %i ms a holder whose lease ends at 1000 ms holds: %s', (nowMs, expected) => {
    expect(holds(holder, nowMs)).toBe(expected);
  });

  it('nobody holds a partition without a holder', () => {
    expect(holds(undefined, 0)).toBe(false);
  });

  it.each([
    {
      name: 'the holder itself, within its lease',
      current: holder,
      access: { producerId: 'a' },
      nowMs: 500,
      allowed: true,
    },
    {
      name: 'the holder itself, past its lease (nobody took over)',
      current: holder,
      access: { producerId: 'a' },
      nowMs: 5_000,
      allowed: true,
    },
    {
      name: 'a fenced registration',
      current: holder,
      access: { producerId: 'b' },
      nowMs: 500,
      allowed: false,
    },
    {
      name: 'a registration on a partition nobody holds',
      current: undefined,
      access: { producerId: 'a' },
      nowMs: 500,
      allowed: false,
    },
    {
      name: 'an unregistered publish while the holder holds',
      current: holder,
      access: undefined,
      nowMs: 1_000,
      allowed: false,
    },
    {
      name: 'an unregistered publish once its lease lapsed',
      current: holder,
      access: undefined,
      nowMs: 1_001,
      allowed: true,
    },
    {
      name: 'an unregistered publish on a partition nobody holds',
      current: undefined,
      access: undefined,
      nowMs: 0,
      allowed: true,
    },
  ])('$name: $allowed', ({ current, access, nowMs, allowed }) => {
    expect(publishAllowed(current, access, nowMs)).toBe(allowed);
  });
});
