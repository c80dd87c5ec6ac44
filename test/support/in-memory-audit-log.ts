import type { AuditLog, AuditRecord } from '../../shared/ports/audit-log.ts';
import { compareUtf8, InjectedFaults } from './in-memory-faults.ts';

/**
 * AuditLog in memory, with the semantics of DynamoDbAuditLog: records of a
 * topic are keyed by (atMs, requestId), so recording the same pair again
 * replaces the record, and `list` reads newest first (ties by requestId,
 * descending). Not persisted; every operation is atomic.
 */
export class InMemoryAuditLog implements AuditLog {
  /** Topic -> `<atMs:15>#<requestId>` -> record. */
  private readonly records = new Map<string, Map<string, AuditRecord>>();
  private readonly faults = new InjectedFaults<keyof AuditLog>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof AuditLog, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async record(record: AuditRecord): Promise<void> {
    await this.faults.enter('record');
    const records = this.records.get(record.topic) ?? new Map<string, AuditRecord>();
    const key = `${record.atMs.toString().padStart(15, '0')}#${record.requestId}`;
    records.set(key, { ...record, subscriptions: [...record.subscriptions] });
    this.records.set(record.topic, records);
  }

  async list(topic: string, limit: number): Promise<AuditRecord[]> {
    await this.faults.enter('list');
    return [...(this.records.get(topic) ?? [])]
      .sort(([a], [b]) => compareUtf8(b, a))
      .slice(0, limit)
      .map(([, record]) => ({ ...record, subscriptions: [...record.subscriptions] }));
  }
}
