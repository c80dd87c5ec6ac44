import { describe, expect, it } from 'vitest';
import { CAUGHT_UP_TTL_MS, ContainerHints } from '../../../shared/application/container-hints.ts';
import { ManualClock } from '../../support/manual-clock.ts';

describe('ContainerHints', () => {
  it('trusts a caught-up mark for CAUGHT_UP_TTL_MS, and not after forget', () => {
    const clock = new ManualClock(1_000);
    const { caughtUp } = new ContainerHints(clock);

    caughtUp.mark('cursor');
    clock.advance(CAUGHT_UP_TTL_MS - 1);
    expect(caughtUp.has('cursor')).toBe(true);
    expect(caughtUp.remainingMs('cursor')).toBe(1);
    clock.advance(1);
    expect(caughtUp.has('cursor')).toBe(false);
    expect(caughtUp.remainingMs('cursor')).toBe(0);
    caughtUp.mark('cursor');
    caughtUp.forget('cursor');
    expect(caughtUp.has('cursor')).toBe(false);
  });

  it('counts unacknowledged entries again only past the allowed age, adding what it handed out and taking what was settled', async () => {
    const clock = new ManualClock(1_000);
    const { unacked } = new ContainerHints(clock);
    let counts = 0;
    const count = async () => {
      counts++;
      return new Map([['c1', 2]]);
    };

    unacked.add('cursor', 'c1', 5); // not counted here yet: nothing to add to
    expect((await unacked.recent('cursor', 100, count)).get('c1')).toBe(2);
    unacked.add('cursor', 'c1', 3);
    unacked.add('cursor', 'c2', 1);
    unacked.add('cursor', 'c1', -10);
    const adjusted = await unacked.recent('cursor', 100, count);
    expect([adjusted.get('c1'), adjusted.get('c2')]).toEqual([0, 1]);
    expect(counts).toBe(1);
    clock.advance(100);
    expect((await unacked.recent('cursor', 100, count)).get('c1')).toBe(2);
    expect(counts).toBe(2);
  });

  it('two containers note apart: what one marked, the other does not know', () => {
    const clock = new ManualClock(1_000);
    const first = new ContainerHints(clock);
    const second = new ContainerHints(clock);

    first.caughtUp.mark('cursor');
    first.renewals.set('c1', clock.nowMs());
    first.activityMarks.set('cursor', clock.nowMs());

    expect(second.caughtUp.has('cursor')).toBe(false);
    expect(second.renewals.get('c1')).toBeUndefined();
    expect(second.activityMarks.get('cursor')).toBeUndefined();
  });
});
