import type { DeletionJob, DeletionJobStore } from '../../shared/ports/deletion-jobs.ts';
import { InjectedFaults } from './in-memory-faults.ts';

/** DeletionJobStore in memory, with DynamoDbDeletionJobs' semantics (jobs by id order). Not persisted. */
export class InMemoryDeletionJobs implements DeletionJobStore {
  readonly jobs = new Map<string, DeletionJob>();
  private readonly faults = new InjectedFaults<keyof DeletionJobStore>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof DeletionJobStore, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async save(job: DeletionJob): Promise<void> {
    await this.faults.enter('save');
    this.jobs.set(job.jobId, structuredClone(job));
  }

  async update(job: DeletionJob): Promise<void> {
    await this.faults.enter('update');
    if (this.jobs.has(job.jobId)) this.jobs.set(job.jobId, structuredClone(job));
  }

  async get(jobId: string): Promise<DeletionJob | undefined> {
    await this.faults.enter('get');
    const job = this.jobs.get(jobId);
    return job && structuredClone(job);
  }

  async group(groupId: string): Promise<DeletionJob[]> {
    await this.faults.enter('group');
    return this.sorted().filter((job) => job.groupId === groupId);
  }

  async list(): Promise<DeletionJob[]> {
    await this.faults.enter('list');
    return this.sorted();
  }

  async remove(jobId: string): Promise<void> {
    await this.faults.enter('remove');
    this.jobs.delete(jobId);
  }

  private sorted(): DeletionJob[] {
    return [...this.jobs.values()]
      .sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0))
      .map((job) => structuredClone(job));
  }
}
