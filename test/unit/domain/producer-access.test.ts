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
    ['the holder itself, within its lease', holder, { producerId: 'a' }, 500, true],
    ['the holder itself, past its lease (nobody took over)', holder, { producerId: 'a' }, 5_000, true],
    ['a fenced registration', holder, { producerId: 'b' }, 500, false],
    ['a registration on a partition nobody holds', undefined, { producerId: 'a' }, 500, false],
    ['an unregistered publish while the holder holds', holder, undefined, 1_000, false],
    ['an unregistered publish once its lease lapsed', holder, undefined, 1_001, true],
    ['an unregistered publish on a partition nobody holds', undefined, undefined, 0, true],
  ] as const)('%s: %s', (_, current, access, nowMs, expected) => {
    expect(publishAllowed(current, access, nowMs)).toBe(expected);
  });
});
