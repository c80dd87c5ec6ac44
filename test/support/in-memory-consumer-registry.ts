import type { ConsumerRecord, ConsumerRegistry } from '../../shared/ports/consumer-registry.ts';

/** ConsumerRegistry in memory: records by id, members with the end of their lease. */
export class InMemoryConsumerRegistry implements ConsumerRegistry {
  readonly records = new Map<string, ConsumerRecord>();
  private readonly memberships = new Map<string, Map<string, number>>();

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

  async heartbeat(subscriptionKey: string, consumerId: string, untilMs: number): Promise<void> {
    const members = this.memberships.get(subscriptionKey) ?? new Map<string, number>();
    members.set(consumerId, untilMs);
    this.memberships.set(subscriptionKey, members);
  }

  async leave(subscriptionKey: string, consumerId: string): Promise<void> {
    this.memberships.get(subscriptionKey)?.delete(consumerId);
  }

  async members(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return [...(this.memberships.get(subscriptionKey) ?? [])]
      .filter(([, until]) => until >= nowMs)
      .map(([id]) => id)
      .sort();
  }

  async leases(subscriptionKey: string): Promise<{ consumerId: string; untilMs: number }[]> {
    return [...(this.memberships.get(subscriptionKey) ?? [])]
      .map(([consumerId, untilMs]) => ({ consumerId, untilMs }))
      .sort((a, b) => (a.consumerId < b.consumerId ? -1 : 1));
  }

  async expired(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return [...(this.memberships.get(subscriptionKey) ?? [])]
      .filter(([, until]) => until < nowMs)
      .map(([id]) => id)
      .sort();
  }
}
