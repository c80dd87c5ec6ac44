import type { ExclusiveProducer } from '../domain/producer-access.ts';
import type { TopicName } from '../domain/topic-name.ts';

/** What {@link ProducerAccessStore.acquire} asks for. */
export interface AcquireRequest {
  readonly partition: TopicName;
  readonly producerId: string;
  readonly producerName: string;
  /** true (ExclusiveWithFencing): take the partition whoever holds it; false: only when nobody does. */
  readonly fence: boolean;
  readonly nowMs: number;
  readonly leaseUntilMs: number;
}

/** What {@link ProducerAccessStore.acquire} found. */
export type Acquired =
  | { readonly acquired: true; readonly holder: ExclusiveProducer }
  | { readonly acquired: false; readonly holder: ExclusiveProducer | undefined };

/**
 * The exclusive producer of each partition (Pulsar's `hasExclusiveProducer` and topic epoch), kept
 * with the partition's ledger state, so that the ledger's id allocation checks a publish against it
 * in the same conditional write (a publish costs nothing more; see `AppendOptions.access`).
 * Durable; fixed size (one holder). Shared producers are not registered.
 */
export interface ProducerAccessStore {
  /**
   * Makes `producerId` the partition's exclusive producer at the next topic epoch: when nobody holds
   * the partition (or its holder's lease lapsed), or always with `fence` (the holder is fenced: its
   * later publishes are refused). Cost: one conditional write of the ledger state item; a refusal
   * adds one strongly consistent read.
   * @throws TopicNotFoundError when the partition has no ledger.
   */
  acquire(request: AcquireRequest): Promise<Acquired>;
  /**
   * Renews the holder's lease (a heartbeat). Cost: one conditional write.
   * @returns false when `producerId` no longer holds the partition (fenced).
   */
  renew(request: {
    readonly partition: TopicName;
    readonly producerId: string;
    readonly leaseUntilMs: number;
  }): Promise<boolean>;
  /** Frees the partition if `producerId` holds it (a producer's close); else nothing. Cost: one conditional write. */
  release(partition: TopicName, producerId: string): Promise<void>;
  /** The holder (lease lapsed or not), strongly consistent. Cost: one read of the state item. */
  holder(partition: TopicName): Promise<ExclusiveProducer | undefined>;
}
