import { ServiceUnavailableError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { NewEntry, StoredEntry } from '../../ports/ledger.ts';
import {
  type ProducerSequenceState,
  type SequenceClaim,
  type SequencedBatch,
  withBatch,
} from '../../ports/producer-sequences.ts';
import { policiesInForce } from '../tenancy/manage-policies.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * A claim older than this is its publisher's that died (past API Gateway's 29 s and the function's
 * timeout): a retry takes it over.
 */
export const DEDUPLICATION_CLAIM_TIMEOUT_MS = 35_000;
/** How long a container trusts a topic's deduplication setting it read. */
export const DEDUPLICATION_POLICY_TTL_MS = 5_000;

/** A message's answer when it is a duplicate. */
export type DuplicateOutcome =
  | { readonly messageId: string }
  | { readonly errorCode: number; readonly errorMsg: string };

/** One partition's messages after deduplication. */
export interface DeduplicatedGroup {
  /** The indexes (in the group) of the messages to append, in order. */
  readonly fresh: readonly number[];
  /** The answers of the duplicates, by index in the group. */
  readonly duplicates: ReadonlyMap<number, DuplicateOutcome>;
  /** Records where the fresh messages went (their positions, in order). Call after the append. */
  finish(positions: readonly Position[]): Promise<void>;
  /**
   * The append was refused by a condition (the partition's exclusive producer, a deleted topic):
   * records what it stored before the refusal, if anything (an append spanning a rollover), and
   * clears the claim, so the producer's next publish need not wait out the claim's timeout.
   */
  abandon(): Promise<void>;
}

const NOTHING_TO_RECORD = async () => undefined;

/**
 * Pulsar's broker deduplication (`brokerDeduplicationEnabled`, PIP-6) for one partition's messages
 * of one publish. A message whose producer name and sequence id are set, on a topic where
 * deduplication is on, is stored only if its sequence id is above the highest stored for that
 * producer on that partition; otherwise it is answered with the MessageId stored for that sequence
 * id (found in the producer's last MAX_SEQUENCED_BATCHES batches), and not stored again.
 * 1. No sequenced message, or deduplication off: everything is fresh (no storage call).
 * 2. Claim the batch's sequence ids (one conditional write): refused when some are not above the
 *    last stored (those are duplicates; the rest is claimed again) or while another publish of the
 *    producer holds a claim (a concurrent retry: 503, retry; Pulsar's "cannot determine" answer).
 * 3. The caller appends the fresh messages, then `finish` records their positions and clears the
 *    claim (one conditional write).
 * Cost with deduplication on: two writes of one unit per partition and publish; a duplicate adds
 * one read of the state and one read of its batch's entries.
 * A publisher that dies between its claim and its record leaves a claim that retries meet: within
 * DEDUPLICATION_CLAIM_TIMEOUT_MS they answer 503; after it, the first resolves the claim from the
 * ledger (resolveAbandonedClaim: what the dead publisher stored becomes its recorded batch), then
 * claims again, so a message stored by the dead publisher is answered as a duplicate, never stored
 * twice.
 */
export async function deduplicate(
  ports: UseCasePorts,
  partition: TopicName,
  entries: readonly NewEntry[],
): Promise<DeduplicatedGroup> {
  const all = entries.map((_, index) => index);
  const sequenced = entries.filter((entry) => entry.sequenceId !== undefined && entry.producerName);
  const producerName = sequenced[0]?.producerName;
  if (producerName === undefined || !(await deduplicationEnabled(ports, partition))) {
    return { fresh: all, duplicates: new Map(), finish: NOTHING_TO_RECORD, abandon: NOTHING_TO_RECORD };
  }
  const { incarnation, end } = await partitionMark(ports, partition);
  const duplicates = new Map<number, number>();
  for (let attempt = 0; ; attempt += 1) {
    const candidates = rising(entries, duplicates);
    if (candidates.length === 0) break;
    const claim = {
      token: ports.ids.newId(),
      firstSequenceId: sequenceOf(entries, candidates[0] as number),
      lastSequenceId: sequenceOf(entries, candidates.at(-1) as number),
      claimedAtMs: ports.clock.nowMs(),
      from: end,
    };
    const key = { partition: partition.toString(), producerName };
    // A stale claim is never taken over blindly: resolveAbandonedClaim reads what it stored first.
    const { claimed, state } = await ports.producerSequences.claim({
      ...key,
      incarnation,
      claim,
      staleBeforeMs: 0,
    });
    if (claimed) {
      const fresh = all.filter((index) => !duplicates.has(index));
      return {
        fresh,
        duplicates: await answersOf(ports, { partition, producerName, state, duplicates, entries }),
        abandon: () => resolveAbandonedClaim(ports, { partition, producerName, state, pending: claim }),
        finish: async (positions) => {
          const batch = {
            firstSequenceId: claim.firstSequenceId,
            lastSequenceId: claim.lastSequenceId,
            runs: runsOf(positions),
          };
          await ports.producerSequences.record({
            ...key,
            token: claim.token,
            lastSequenceId: claim.lastSequenceId,
            batches: withBatch(state.batches, batch),
          });
        },
      };
    }
    const pending = state.pending;
    if (pending && pending.claimedAtMs < claim.claimedAtMs - DEDUPLICATION_CLAIM_TIMEOUT_MS && attempt < 3) {
      await resolveAbandonedClaim(ports, { partition, producerName, state, pending });
      continue;
    }
    const stored = candidates.filter((index) => sequenceOf(entries, index) <= state.lastSequenceId);
    if (stored.length === 0 || attempt >= 3) {
      throw new ServiceUnavailableError(
        `A publish of producer ${producerName} on ${partition.toString()} with sequence ids from ${claim.firstSequenceId} is in flight; whether these are duplicates is not known yet: retry`,
      );
    }
    for (const index of stored) duplicates.set(index, sequenceOf(entries, index));
  }
  const state = await ports.producerSequences.get(partition.toString(), producerName);
  return {
    fresh: all.filter((index) => !duplicates.has(index)),
    duplicates: await answersOf(ports, { partition, producerName, state, duplicates, entries }),
    finish: NOTHING_TO_RECORD,
    abandon: NOTHING_TO_RECORD,
  };
}

/** Whether deduplication is on for the partition's topic (its policy, else its namespace's; default off). */
export async function deduplicationEnabled(ports: UseCasePorts, partition: TopicName): Promise<boolean> {
  const topic = partition.partitionedTopicName.toString();
  const known = ports.hints.deduplication.get(topic);
  const now = ports.clock.nowMs();
  if (known && now - known.atMs < DEDUPLICATION_POLICY_TTL_MS) return known.enabled;
  const { deduplicationEnabled: enabled } = await policiesInForce(ports, partition);
  ports.hints.deduplication.set(topic, { enabled, atMs: now });
  return enabled;
}

/** The partition's incarnation: its first ledger (a topic deleted and created again has another). */
export async function incarnationOf(ports: UseCasePorts, partition: TopicName): Promise<string> {
  return (await partitionMark(ports, partition)).incarnation;
}

/**
 * The partition's incarnation, and its end as this container last read it (`L:E`, the next entry
 * id of its last ledger): a lower bound of where an append that starts now stores (a state only
 * grows). From the ledger state this container caches (LEDGER_STATE_TTL_MS): no read on a hit.
 */
async function partitionMark(
  ports: UseCasePorts,
  partition: TopicName,
): Promise<{ readonly incarnation: string; readonly end?: string }> {
  const state = await ports.ledger.recentState(partition);
  const last = state?.ledgers.at(-1);
  return {
    incarnation: String(state?.ledgers[0]?.ledgerId ?? 'none'),
    ...(last ? { end: `${last.ledgerId}:${last.entries}` } : {}),
  };
}

/**
 * A claim older than DEDUPLICATION_CLAIM_TIMEOUT_MS belongs to a publish whose invocation ended
 * (past API Gateway's 29 s and the data API function's 29 s timeout, so it writes nothing more),
 * whether it died before its append, during it, or between its append and its record. What it
 * stored is read from the ledger, from the claim's `from` on: this producer's entries with the
 * claim's sequence ids. They are recorded as its batch (the last sequence id moves to the highest
 * found) and the claim is cleared, with the claim's own token, so a concurrent resolver or the
 * publisher itself records once. The retry then claims again and finds them duplicates: the crash
 * window stores nothing twice.
 * Cost, only after a publisher died: the ledger state (one read), the entries the partition stored
 * since the claim (one Query per ledger and 1 MB), one conditional write.
 */
async function resolveAbandonedClaim(
  ports: UseCasePorts,
  abandoned: {
    readonly partition: TopicName;
    readonly producerName: string;
    readonly state: ProducerSequenceState;
    readonly pending: SequenceClaim;
  },
): Promise<void> {
  const { partition, producerName, state, pending } = abandoned;
  const found = await entriesOfClaim(ports, abandoned);
  const sequenceIds = found.map((entry) => entry.sequenceId as number);
  const highest = Math.max(state.lastSequenceId, ...sequenceIds);
  const batches =
    found.length === 0
      ? state.batches
      : withBatch(state.batches, {
          firstSequenceId: Math.min(...sequenceIds),
          lastSequenceId: Math.max(...sequenceIds),
          runs: runsOf(found.map((entry) => entry.position)),
        });
  await ports.producerSequences.record({
    partition: partition.toString(),
    producerName,
    token: pending.token,
    lastSequenceId: highest,
    batches,
  });
}

/** The entries of `producerName` with the pending claim's sequence ids, stored from its `from` on, in order. */
async function entriesOfClaim(
  ports: UseCasePorts,
  abandoned: {
    readonly partition: TopicName;
    readonly producerName: string;
    readonly pending: SequenceClaim;
  },
): Promise<StoredEntry[]> {
  const { partition, producerName, pending } = abandoned;
  const from = pending.from === undefined ? undefined : Position.parseStored(pending.from);
  const state = await ports.ledger.state(partition);
  const found: StoredEntry[] = [];
  const seen = new Set<number>();
  for (const ledger of state?.ledgers ?? []) {
    if (from && ledger.ledgerId < from.ledgerId) continue;
    const first = from && ledger.ledgerId === from.ledgerId ? from.entryId : 0n;
    if (first > ledger.entries - 1n) continue;
    for (const entry of await ports.ledger.readEntries(ledger.ledgerId, first, ledger.entries - 1n)) {
      const sequenceId = entry.sequenceId;
      if (
        entry.producerName === producerName &&
        sequenceId !== undefined &&
        sequenceId >= pending.firstSequenceId &&
        sequenceId <= pending.lastSequenceId &&
        !seen.has(sequenceId)
      ) {
        seen.add(sequenceId);
        found.push(entry);
      }
    }
  }
  return found;
}

/**
 * The indexes of sequenced messages not yet known as duplicates whose sequence ids rise in request
 * order; one that does not rise repeats an earlier one of the same request and is a duplicate too.
 */
function rising(entries: readonly NewEntry[], duplicates: Map<number, number>): number[] {
  const indexes: number[] = [];
  let highest = -1;
  entries.forEach((entry, index) => {
    if (entry.sequenceId === undefined || !entry.producerName || duplicates.has(index)) return;
    if (entry.sequenceId <= highest) duplicates.set(index, entry.sequenceId);
    else {
      highest = entry.sequenceId;
      indexes.push(index);
    }
  });
  return indexes;
}

function sequenceOf(entries: readonly NewEntry[], index: number): number {
  return entries[index]?.sequenceId as number;
}

/** Positions as runs of consecutive entry ids (one per ledger the append wrote to). */
function runsOf(positions: readonly Position[]): SequencedBatch['runs'] {
  const runs: [string, string, number][] = [];
  for (const position of positions) {
    const last = runs.at(-1);
    if (
      last &&
      last[0] === position.ledgerId.toString() &&
      BigInt(last[1]) + BigInt(last[2]) === position.entryId
    ) {
      last[2] += 1;
    } else {
      runs.push([position.ledgerId.toString(), position.entryId.toString(), 1]);
    }
  }
  return runs;
}

/**
 * The answers of the duplicates: the MessageId stored for each sequence id, read from the batch that
 * holds it (one read of its entries per batch); a sequence id older than the remembered batches, or
 * one the producer skipped, answers an error that says so (its message is not stored again).
 */
async function answersOf(
  ports: UseCasePorts,
  request: {
    readonly partition: TopicName;
    readonly producerName: string;
    readonly state: ProducerSequenceState | undefined;
    readonly duplicates: ReadonlyMap<number, number>;
    readonly entries: readonly NewEntry[];
  },
): Promise<Map<number, DuplicateOutcome>> {
  const { partition, producerName, state, duplicates } = request;
  const answers = new Map<number, DuplicateOutcome>();
  const found = new Map<number, string>();
  for (const batch of state?.batches ?? []) {
    const wanted = [...duplicates.values()].filter(
      (sequenceId) => sequenceId >= batch.firstSequenceId && sequenceId <= batch.lastSequenceId,
    );
    if (wanted.length === 0) continue;
    for (const [ledgerId, firstEntryId, count] of batch.runs) {
      const first = BigInt(firstEntryId);
      const stored = await ports.ledger.readEntries(BigInt(ledgerId), first, first + BigInt(count) - 1n);
      for (const entry of stored) {
        if (entry.producerName === producerName && entry.sequenceId !== undefined) {
          found.set(entry.sequenceId, `${entry.position.toString()}:${partition.partitionIndex}`);
        }
      }
    }
  }
  for (const [index, sequenceId] of duplicates) {
    const messageId = found.get(sequenceId);
    answers.set(
      index,
      messageId !== undefined
        ? { messageId }
        : {
            errorCode: 2,
            errorMsg: `Duplicate: sequence id ${sequenceId} of producer ${producerName} is not above the highest it sent before (the last stored, ${state?.lastSequenceId ?? -1}, or an earlier message of this publish); not stored again, and no MessageId is remembered for it`,
          },
    );
  }
  return answers;
}
