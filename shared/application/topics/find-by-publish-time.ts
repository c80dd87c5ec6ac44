import { TopicNotFoundError } from '../../domain/catalog-errors.ts';
import { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { Ledger, ManagedLedgerState } from '../../ports/ledger.ts';

/**
 * The position after the last entry allocated on the partition (where the next one will go):
 * a cursor reset there has consumed everything published so far.
 */
export function endOfLog(state: ManagedLedgerState): Position {
  const current = state.ledgers[state.ledgers.length - 1];
  if (!current) throw new RangeError(`${state.partition.toString()} has no ledger`);
  return Position.of(current.ledgerId, current.entries);
}

/**
 * The first entry of the partition published at or after `timeMs` (Pulsar's reset-cursor by
 * timestamp and message expiry search: `findNewestMatching` over publish times); the end of the
 * log when none is. Publish times grow along the log (one server clock per batch; concurrent
 * publishers may interleave by a few ms, as in Pulsar, where the search is approximate too).
 * A binary search on batch starts, ledger after ledger, reading keys and publish times only
 * (`firstWrittenAfter`), never payloads.
 * Cost: the ledger state, then at most about log2(entries of the ledger) + 1 one-item Queries per
 * ledger searched (17 for a full ledger of 50,000 entries).
 */
export async function firstPublishedAtOrAfter(
  ledger: Ledger,
  partition: TopicName,
  timeMs: number,
): Promise<Position> {
  const state = await ledger.state(partition);
  // No state: the partition was deleted (a topic deletion racing the call), or never made: 404.
  if (!state) throw new TopicNotFoundError(partition.toString());
  for (const { ledgerId, entries } of state.ledgers) {
    let lo = 0n;
    let hi = entries;
    // The smallest id whose next batch start is missing or not older than timeMs (a monotone test).
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      const next = await ledger.firstWrittenAfter(ledgerId, mid - 1n);
      if (!next || next.position.entryId >= entries) {
        hi = mid;
      } else if (next.publishTimeMs >= timeMs) {
        hi = mid;
      } else {
        lo = next.position.entryId + 1n;
      }
    }
    const candidate = lo < entries ? await ledger.firstWrittenAfter(ledgerId, lo - 1n) : undefined;
    if (candidate && candidate.position.entryId < entries && candidate.publishTimeMs >= timeMs) {
      return candidate.position;
    }
  }
  return endOfLog(state);
}
