import {
  type AuditLog,
  type AuditRecord,
  DEFAULT_AUDIT_RETENTION_DAYS,
} from '../../shared/ports/audit-log.ts';
import { compareUtf8, InjectedFaults } from './in-memory-faults.ts';

/**
 * AuditLog in memory, with the semantics of DynamoDbAuditLog: records of a
 * topic are keyed by (atMs, requestId), so recording the same pair again
 * replaces the record, and `list` reads newest first (ties by requestId,
 * descending). Not persisted; every operation is atomic.
 */
export class InMemoryAuditLog implements AuditLog {
  constructor(private readonly retentionMs = DEFAULT_AUDIT_RETENTION_DAYS * 86_400_000) {}

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

  async purgeExpired(nowMs: number, before: () => boolean): Promise<number> {
    await this.faults.enter('purgeExpired');
    let deleted = 0;
    for (const records of this.records.values()) {
      for (const [key, record] of records) {
        if (!before()) return deleted;
        if (record.atMs + this.retentionMs <= nowMs) {
          records.delete(key);
          deleted++;
        }
      }
    }
    return deleted;
  }

  /** Test view: how many records are stored, expired or not. */
  get size(): number {
    return [...this.records.values()].reduce((sum, records) => sum + records.size, 0);
  }

  async list(topic: string, limit: number, nowMs: number): Promise<AuditRecord[]> {
    await this.faults.enter('list');
    return [...(this.records.get(topic) ?? [])]
      .filter(([, record]) => record.atMs + this.retentionMs > nowMs)
      .sort(([a], [b]) => compareUtf8(b, a))
      .slice(0, limit)
      .map(([, record]) => ({ ...record, subscriptions: [...record.subscriptions] }));
  }
}
