import type {
  ClaimRequest,
  ProducerSequenceState,
  ProducerSequenceStore,
  SequencedBatch,
} from '../../shared/ports/producer-sequences.ts';

/** ProducerSequenceStore in memory, with DynamoDbProducerSequenceStore's conditions. */
export class InMemoryProducerSequenceStore implements ProducerSequenceStore {
  private readonly states = new Map<string, ProducerSequenceState>();

  async claim(request: ClaimRequest): Promise<{ claimed: boolean; state: ProducerSequenceState }> {
    const key = JSON.stringify([request.partition, request.producerName]);
    const state = this.states.get(key);
    const sameIncarnation = state?.incarnation === request.incarnation;
    if (
      state &&
      sameIncarnation &&
      (state.lastSequenceId >= request.claim.firstSequenceId ||
        (state.pending !== undefined && state.pending.claimedAtMs >= request.staleBeforeMs))
    ) {
      return { claimed: false, state: structuredClone(state) };
    }
    const claimed: ProducerSequenceState = {
      incarnation: request.incarnation,
      lastSequenceId: sameIncarnation ? (state?.lastSequenceId ?? -1) : -1,
      batches: sameIncarnation ? (state?.batches ?? []) : [],
      pending: request.claim,
    };
    this.states.set(key, claimed);
    return { claimed: true, state: structuredClone(claimed) };
  }

  async record(request: {
    partition: string;
    producerName: string;
    token: string;
    lastSequenceId: number;
    batches: readonly SequencedBatch[];
  }): Promise<boolean> {
    const key = JSON.stringify([request.partition, request.producerName]);
    const state = this.states.get(key);
    if (state?.pending?.token !== request.token) return false;
    this.states.set(key, {
      incarnation: state.incarnation,
      lastSequenceId: Math.max(state.lastSequenceId, request.lastSequenceId),
      batches: [...request.batches],
    });
    return true;
  }

  async get(partition: string, producerName: string): Promise<ProducerSequenceState | undefined> {
    const state = this.states.get(JSON.stringify([partition, producerName]));
    return state && structuredClone(state);
  }
}
