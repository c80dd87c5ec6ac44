import type {
  ConsumerRecord,
  ConsumerRegistry,
  MemberLease,
  WaitingReceive,
} from '../../shared/ports/consumer-registry.ts';

/** ConsumerRegistry in memory: records by id, members with the end of their lease (and waiting receive). */
export class InMemoryConsumerRegistry implements ConsumerRegistry {
  readonly records = new Map<string, ConsumerRecord>();
  private readonly memberships = new Map<string, Map<string, MemberLease>>();

  async register(record: ConsumerRecord): Promise<void> {
    this.records.set(record.consumerId, structuredClone(record));
  }

  async get(consumerId: string): Promise<ConsumerRecord | undefined> {
    const record = this.records.get(consumerId);
    return record && structuredClone(record);
  }

  async delete(consumerId: string): Promise<void> {
    this.records.delete(consumerId);
  }

  async heartbeat(
    subscriptionKey: string,
    consumerId: string,
    untilMs: number,
    options: { readonly receive?: WaitingReceive | null } = {},
  ): Promise<void> {
    const members = this.memberships.get(subscriptionKey) ?? new Map<string, MemberLease>();
    const receive = options.receive === undefined ? members.get(consumerId)?.receive : options.receive;
    members.set(consumerId, { consumerId, untilMs, ...(receive ? { receive: { ...receive } } : {}) });
    this.memberships.set(subscriptionKey, members);
  }

  async leave(subscriptionKey: string, consumerId: string): Promise<void> {
    this.memberships.get(subscriptionKey)?.delete(consumerId);
  }

  async members(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leases(subscriptionKey))
      .filter(({ untilMs }) => untilMs >= nowMs)
      .map(({ consumerId }) => consumerId);
  }

  async leases(subscriptionKey: string): Promise<MemberLease[]> {
    return [...(this.memberships.get(subscriptionKey)?.values() ?? [])]
      .map((lease) => structuredClone(lease))
      .sort((a, b) => (a.consumerId < b.consumerId ? -1 : 1));
  }

  async expired(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leases(subscriptionKey))
      .filter(({ untilMs }) => untilMs < nowMs)
      .map(({ consumerId }) => consumerId);
  }
}
