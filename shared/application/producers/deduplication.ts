import { ServiceUnavailableError } from '../../domain/errors.ts';
import type { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { NewEntry } from '../../ports/ledger.ts';
import {
  type ProducerSequenceState,
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
 * A publisher that dies between its append and its record leaves a claim that a retry takes over
 * after DEDUPLICATION_CLAIM_TIMEOUT_MS; that retry stores its messages again (the one window in
 * which a duplicate is stored).
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
    return { fresh: all, duplicates: new Map(), finish: NOTHING_TO_RECORD };
  }
  const incarnation = await incarnationOf(ports, partition);
  const duplicates = new Map<number, number>();
  for (let attempt = 0; ; attempt += 1) {
    const candidates = rising(entries, duplicates);
    if (candidates.length === 0) break;
    const claim = {
      token: ports.ids.newId(),
      firstSequenceId: sequenceOf(entries, candidates[0] as number),
      lastSequenceId: sequenceOf(entries, candidates.at(-1) as number),
      claimedAtMs: ports.clock.nowMs(),
    };
    const key = { partition: partition.toString(), producerName };
    const { claimed, state } = await ports.producerSequences.claim({
      ...key,
      incarnation,
      claim,
      staleBeforeMs: claim.claimedAtMs - DEDUPLICATION_CLAIM_TIMEOUT_MS,
    });
    if (claimed) {
      const fresh = all.filter((index) => !duplicates.has(index));
      return {
        fresh,
        duplicates: await answersOf(ports, { partition, producerName, state, duplicates, entries }),
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
    const stored = candidates.filter((index) => sequenceOf(entries, index) <= state.lastSequenceId);
    if (stored.length === 0 || attempt >= 2) {
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
  const state = await ports.ledger.recentState(partition);
  return String(state?.ledgers[0]?.ledgerId ?? 'none');
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
