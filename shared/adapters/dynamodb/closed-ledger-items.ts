import { DeleteItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LedgerInfo } from '../../domain/ledger-layout.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { ClosedLedgerCache } from './closed-ledger-cache.ts';
import { big, type Item, N, queryAll, S, writeAll } from './dynamodb-support.ts';

/** Where a partition's layout stands, as its state item says. */
export interface ClosedLedgersOf {
  readonly partition: TopicName;
  /** The incarnation's first ledger. */
  readonly firstLedgerId: bigint;
  /** The last ledger closed (the one before the current ledger); undefined: none was. */
  readonly lastClosedId: bigint | undefined;
}

/**
 * A partition's closed ledgers, one Catalog item each, beside its state item: pk
 * `ML#<partition>`, sk `L#<ledgerId, 20 digits>`, `n` the entries it holds. About 40 bytes plus
 * the partition's name; written once, by the rollover that closes the ledger (before the state
 * switches to the next ledger, so whoever reads the state finds every ledger before the current
 * one); deleted by {@link ClosedLedgerItems.delete} when the topic's ledgers are purged. Items of a
 * partition's earlier incarnation (a topic deleted and created again) may stand beside the new
 * one's until purged: they have lower ids than its first ledger, and reads start at it.
 *
 * Reads go through a {@link ClosedLedgerCache}: this process reads each closed ledger once.
 */
export class ClosedLedgerItems {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly catalogTable: string,
    private readonly cache = new ClosedLedgerCache(),
  ) {}

  /**
   * Records closed ledgers (idempotent: a rollover racing another writes the same items).
   * Cost: one write unit per ledger (BatchWriteItem, 25 a request).
   */
  async record(partition: TopicName, ledgers: readonly LedgerInfo[]): Promise<void> {
    await writeAll(
      this.client,
      this.catalogTable,
      ledgers.map(({ ledgerId, entries }) => ({
        PutRequest: { Item: { ...itemKey(catalogKeys.closedLedger(partition, ledgerId)), n: N(entries) } },
      })),
    );
  }

  /**
   * The closed ledgers of the incarnation, oldest first, up to `lastClosedId`. Cost: nothing when
   * this process read them all before; else one strongly consistent Query of those it has not
   * read: about 45 closed ledgers a read unit for a partition name of 50 bytes (a process's first
   * read of a partition with 10,003 closed ledgers cost 214 read units on dynalite), and one read
   * unit after each rollover.
   */
  async read(of: ClosedLedgersOf): Promise<LedgerInfo[]> {
    const { partition, firstLedgerId, lastClosedId } = of;
    if (lastClosedId === undefined) return [];
    const name = partition.toString();
    const cached = this.cache.prefix(name, firstLedgerId);
    const lastCached = cached[cached.length - 1]?.ledgerId;
    if (lastCached !== undefined && lastCached >= lastClosedId) {
      return cached.filter((ledger) => ledger.ledgerId <= lastClosedId);
    }
    const from = lastCached === undefined ? firstLedgerId : lastCached + 1n;
    const items = await queryAll(this.client, {
      TableName: this.catalogTable,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': S(catalogKeys.closedLedger(partition, from).pk),
        ':from': S(catalogKeys.closedLedger(partition, from).sk),
        ':to': S(catalogKeys.closedLedger(partition, lastClosedId).sk),
      },
      ConsistentRead: true,
    });
    const read = items.map(ledgerOf);
    // Only a prefix that reaches the last closed ledger is complete; anything else is not kept.
    if (read[read.length - 1]?.ledgerId === lastClosedId) this.cache.extend(name, firstLedgerId, read);
    return [...cached, ...read];
  }

  /** Deletes the item of one closed ledger (none: no error). Cost: one write. */
  async delete(partition: TopicName, ledgerId: bigint): Promise<void> {
    await this.client.send(
      new DeleteItemCommand({
        TableName: this.catalogTable,
        Key: itemKey(catalogKeys.closedLedger(partition, ledgerId)),
      }),
    );
  }
}

function ledgerOf(item: Item): LedgerInfo {
  const sk = item.sk?.S ?? '';
  return { ledgerId: BigInt(sk.slice(2)), entries: big(item, 'n') ?? 0n };
}
