import { describe, expect, it } from 'vitest';
import { ReaderPositions, reportedPositions } from '../../../shared/pulsar-client/reader-positions.ts';

describe("a reader's positions (what hasNext answers from)", () => {
  it('has nothing unread until a later entry is known, and nothing once it is read', () => {
    const positions = new ReaderPositions();
    expect(positions.hasUnread()).toBe(false);
    positions.known(-1, [3n, 4n]);
    expect(positions.hasUnread()).toBe(true);
    positions.readAfter(-1, [3n, 4n]);
    expect(positions.hasUnread()).toBe(false);
    positions.known(-1, [3n, 2n]); // an older report changes nothing
    expect(positions.hasUnread()).toBe(false);
    positions.known(-1, [4n, 0n]); // a new ledger
    expect(positions.hasUnread()).toBe(true);
  });

  it('counts each partition on its own; a reader at latest starts after every known entry', () => {
    const positions = new ReaderPositions();
    positions.known(0, [7n, 1n]);
    positions.known(1, [8n, 0n]);
    positions.readAllKnown();
    expect(positions.hasUnread()).toBe(false);
    positions.known(1, [8n, 1n]);
    expect(positions.hasUnread()).toBe(true);
    positions.restart();
    positions.readAfter(1, [8n, 1n]);
    expect(positions.hasUnread()).toBe(true); // partition 0 is unread from its start again
  });

  it("reads a reset-cursor report's new mark-delete positions by partition", () => {
    const report = {
      subscriptions: {
        sub: [
          { partition: 'persistent://t/ns/a-partition-0', newMarkDeletePosition: '3:-1' },
          { partition: 'persistent://t/ns/a-partition-1', newMarkDeletePosition: '4:9' },
        ],
        other: [{ partition: 'persistent://t/ns/a-partition-0', newMarkDeletePosition: '1:1' }],
      },
    };
    expect(reportedPositions(report, 'sub')).toEqual(
      new Map([
        [0, [3n, -1n]],
        [1, [4n, 9n]],
      ]),
    );
    expect(
      reportedPositions(
        { subscriptions: { sub: [{ partition: 'persistent://t/ns/b', newMarkDeletePosition: '2:0' }] } },
        'sub',
      ),
    ).toEqual(new Map([[-1, [2n, 0n]]]));
    expect(reportedPositions(undefined, 'sub').size).toBe(0);
  });
});
