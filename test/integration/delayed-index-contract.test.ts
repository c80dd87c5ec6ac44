import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DynamoDbDelayedIndex } from '../../shared/adapters/dynamodb/dynamodb-delayed-index.ts';
import { Position } from '../../shared/domain/position.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import type { DelayedIndex } from '../../shared/ports/delayed-index.ts';
import { InMemoryDelayedIndex } from '../support/in-memory-delayed-index.ts';
import { storageBackends, useStorage } from '../support/storage-backends.ts';

// The delayed index's contract (issue 24), one suite over the in-memory fake, dynalite and AWS's
// DynamoDB Local: groups by deliverAt and ledger, due-time order, inclusive start, until, limit.

const T = 1_700_000_000_000;

describe.each(storageBackends())('DelayedIndex on $name', (backend) => {
  const stores = useStorage(backend);
  const index = (): DelayedIndex => {
    const dynamodb = stores().dynamodb;
    return dynamodb
      ? new DynamoDbDelayedIndex(dynamodb.client, dynamodb.catalogTable)
      : new InMemoryDelayedIndex();
  };
  const partition = () => TopicName.parse(`persistent://t/ns-${randomUUID().slice(0, 8)}/delayed`);

  it('groups entries by deliverAt and ledger, in due order, ids ascending, split at 100', async () => {
    const delayed = index();
    const p = partition();
    await delayed.put(p, [
      { position: Position.of(7n, 5n), deliverAtMs: T + 2_000 },
      { position: Position.of(7n, 3n), deliverAtMs: T + 2_000 },
      { position: Position.of(7n, 4n), deliverAtMs: T + 1_000 },
      ...Array.from({ length: 150 }, (_, i) => ({
        position: Position.of(8n, BigInt(i)),
        deliverAtMs: T + 3_000,
      })),
    ]);
    const groups = await delayed.groups(p, {
      from: { dueAtMs: 0, ledgerId: 0n, entryId: 0n },
      untilMs: T + 10_000,
      limit: 10,
    });
    expect(groups.map((g) => [g.dueAtMs - T, g.ledgerId, g.firstEntryId, g.entryIds.length])).toEqual([
      [1_000, 7n, 4n, 1],
      [2_000, 7n, 3n, 2],
      [3_000, 8n, 0n, 100],
      [3_000, 8n, 100n, 50],
    ]);
    expect(groups[1]?.entryIds).toEqual([3n, 5n]);
  });

  it('reads from a key (included), up to a due time (included), at most limit; another partition is apart', async () => {
    const delayed = index();
    const p = partition();
    await delayed.put(
      p,
      [1, 2, 3, 4].map((s) => ({ position: Position.of(9n, BigInt(s)), deliverAtMs: T + s * 1_000 })),
    );
    await delayed.put(partition(), [{ position: Position.of(9n, 0n), deliverAtMs: T + 2_500 }]);
    const read = (from: number, entryId: bigint, untilMs: number, limit: number) =>
      delayed.groups(p, { from: { dueAtMs: T + from, ledgerId: 9n, entryId }, untilMs: T + untilMs, limit });
    expect((await read(2_000, 2n, 3_000, 10)).map((g) => g.firstEntryId)).toEqual([2n, 3n]);
    expect((await read(2_000, 3n, 9_000, 10)).map((g) => g.firstEntryId)).toEqual([3n, 4n]);
    expect((await read(0, 0n, 9_000, 2)).map((g) => g.firstEntryId)).toEqual([1n, 2n]);
    await delayed.purge(p);
    expect(await read(0, 0n, 9_000, 10)).toEqual([]);
  });
});
