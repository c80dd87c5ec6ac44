/**
 * Where one publish batch of a named producer went on a partition: its sequence ids and its
 * entries, as runs of consecutive entry ids (one, or two when the append crossed a ledger's end).
 */
export interface SequencedBatch {
  readonly firstSequenceId: number;
  readonly lastSequenceId: number;
  /** `[ledgerId, firstEntryId, count]` runs, in order. */
  readonly runs: readonly (readonly [ledgerId: string, firstEntryId: string, count: number])[];
}

/** A publish that claimed sequence ids and has not recorded where they went yet. */
export interface SequenceClaim {
  readonly token: string;
  readonly firstSequenceId: number;
  readonly lastSequenceId: number;
  readonly claimedAtMs: number;
  /**
   * A position at or before the first the claim's append can take (the partition's end as this
   * container last read it; `L:E`): where a retry reads the ledger from to find what a publisher
   * that died between its append and its record stored. Absent in claims made before it: read from
   * the partition's first ledger.
   */
  readonly from?: string;
}

/** What the store keeps for one producer name on one partition (incarnation). */
export interface ProducerSequenceState {
  /** The partition's incarnation (its first ledger id) the state belongs to. */
  readonly incarnation: string;
  /** The highest sequence id stored (-1: none). */
  readonly lastSequenceId: number;
  /** The last MAX_SEQUENCED_BATCHES batches, oldest first. */
  readonly batches: readonly SequencedBatch[];
  readonly pending?: SequenceClaim;
}

/** How many batches a producer's state remembers: what keeps its item of a fixed, small size. */
export const MAX_SEQUENCED_BATCHES = 8;

/** What {@link ProducerSequenceStore.claim} asks for. */
export interface ClaimRequest {
  readonly partition: string;
  readonly producerName: string;
  readonly incarnation: string;
  readonly claim: SequenceClaim;
  /**
   * A pending claim made before this (epoch ms) is stale: its publisher died; it may be taken over.
   * 0: never taken over here (deduplication resolves a stale claim from the ledger, then records it).
   */
  readonly staleBeforeMs: number;
}

/**
 * Pulsar's broker deduplication state (`MessageDeduplication`'s highestSequencedPersisted per
 * producer), one small item per (partition, producer name). Durable; the item never grows past
 * MAX_SEQUENCED_BATCHES batches of two runs each.
 */
export interface ProducerSequenceStore {
  /**
   * Claims `claim`'s sequence ids: succeeds when they are all above the last stored one and no
   * other publish holds a fresh claim (or the state is of an older incarnation, which is replaced).
   * Cost: one conditional write; on refusal, one strongly consistent read more.
   * @returns whether it claimed, and the state after the claim (or the one that refused it).
   */
  claim(request: ClaimRequest): Promise<{ readonly claimed: boolean; readonly state: ProducerSequenceState }>;
  /**
   * Records where the claimed batch went (`batches`: the claimed state's batches with it, see
   * {@link withBatch}) and clears the claim, only if `token` still holds it.
   * Cost: one conditional write.
   * @returns false when the claim was taken over meanwhile (nothing written).
   */
  record(request: {
    readonly partition: string;
    readonly producerName: string;
    readonly token: string;
    readonly lastSequenceId: number;
    readonly batches: readonly SequencedBatch[];
  }): Promise<boolean>;
  /** The state, strongly consistent; undefined when the producer never published there. Cost: one read. */
  get(partition: string, producerName: string): Promise<ProducerSequenceState | undefined>;
}

/** The batches after adding `batch`, the oldest dropped past MAX_SEQUENCED_BATCHES (pure). */
export function withBatch(batches: readonly SequencedBatch[], batch: SequencedBatch): SequencedBatch[] {
  return [...batches, batch].slice(-MAX_SEQUENCED_BATCHES);
}
