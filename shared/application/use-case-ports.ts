import type { RetentionPolicies } from '../domain/policies.ts';
import type { RedeliveryBackoffRegistry } from '../domain/redelivery-backoff-registry.ts';
import type { ActivityIndex } from '../ports/activity-index.ts';
import type { AuditLog } from '../ports/audit-log.ts';
import type { Clock } from '../ports/clock.ts';
import type { CachedConsumerRegistry } from '../ports/consumer-registry.ts';
import type { Counters } from '../ports/counters.ts';
import type { CursorStore } from '../ports/cursor-store.ts';
import type { DelayedIndex } from '../ports/delayed-index.ts';
import type { DeletionJobStore } from '../ports/deletion-jobs.ts';
import type { DeliveryQueue } from '../ports/delivery-queue.ts';
import type { DispatchStore } from '../ports/dispatch-store.ts';
import type { HandleKeyStore } from '../ports/handle-key-store.ts';
import type { CachedLedger } from '../ports/ledger.ts';
import type { PermissionStore } from '../ports/permission-store.ts';
import type { PolicyStore } from '../ports/policy-store.ts';
import type { ProducerAccessStore } from '../ports/producer-access.ts';
import type { ProducerSequenceStore } from '../ports/producer-sequences.ts';
import type { Scheduler } from '../ports/scheduler.ts';
import type { TenantCatalog } from '../ports/tenant-catalog.ts';
import type { CachedTopicCatalog } from '../ports/topic-catalog.ts';
import type { ContainerHints } from './container-hints.ts';
import type { EngineLimits } from './engine/engine-context.ts';

/** Fresh identifiers (cursor ids, consumer ids); injected so tests can fix them. */
export interface IdGenerator {
  newId(): string;
}

/**
 * The secondary ports the use cases are written against, as one container (a Lambda execution
 * environment) holds them: the catalog, the ledger and the consumer registry with this container's
 * caches in front (see their caching decorators), and this container's hints.
 */
export interface UseCasePorts {
  readonly catalog: CachedTopicCatalog;
  /** Tenants and namespaces created by the admin API. */
  readonly tenants: TenantCatalog;
  readonly ledger: CachedLedger;
  /**
   * Optional: the partitions' delayed indexes, which the ledger writes on append (None: scheduled
   * views list only what the dispatchers passed). See docs/design/storage.md#delayed-index.
   */
  readonly delayedIndex?: DelayedIndex;
  /** The cursor as admin paths read and write it (mark-delete, acks): a view of `dispatch`. */
  readonly cursors: CursorStore;
  /** The delivery engine's cursor state (head, pages, redelivery tracker); see docs/design/delivery-engine.md#items. */
  readonly dispatch: DispatchStore;
  readonly permissions: PermissionStore;
  readonly audit: AuditLog;
  /** Namespace and topic policies (retention, message TTL). */
  readonly policies: PolicyStore;
  /** Producer deduplication state: the last sequence id stored per producer name and partition. */
  readonly producerSequences: ProducerSequenceStore;
  /** Each partition's exclusive producer (producer access modes), kept with its ledger state. */
  readonly producerAccess: ProducerAccessStore;
  readonly deliveryQueue: DeliveryQueue;
  readonly scheduler: Scheduler;
  readonly consumers: CachedConsumerRegistry;
  /** The key that signs delivery handles (cached by the composition root: one read per process). */
  readonly handleKeys: HandleKeyStore;
  /** The subscriptions maintenance has to look at (activity since it last found them settled). */
  readonly activity: ActivityIndex;
  /** Topic and subscription deletions under way (resumable jobs). */
  readonly deletions: DeletionJobStore;
  /** Resolves stored backoff policies (built-ins plus any class the deployment registers). */
  readonly backoffs: RedeliveryBackoffRegistry;
  readonly clock: Clock;
  /**
   * Optional: a random number in [0, 1) (backoff jitter, a receive's first partition); default
   * Math.random. Tests and the simulations seed it, so a run repeats.
   */
  readonly random?: () => number;
  /**
   * What this container notes between calls (lease renewals, caught-up marks, activity marks,
   * unacknowledged counts): one per container, never shared between two.
   */
  readonly hints: ContainerHints;
  readonly ids: IdGenerator;
  readonly settings: {
    readonly clusterName: string;
    /** Retention where no topic or namespace policy sets one; default DEFAULT_RETENTION (Pulsar's 0/0 unless configured). */
    readonly defaultRetention?: RetentionPolicies;
    /**
     * How long after its publish or renewal a stored batch expires (docs/design/storage.md#entry-expiry):
     * maintenance visits a backlog nobody consumes at least every eighth of it, so its expiry is
     * renewed in time. Default: none (BACKLOG_REVISIT_MS alone).
     */
    readonly entryExpiryMs?: number;
  };
  /** Optional: what the use cases count (delivered, acked, nacked, ...). */
  readonly counters?: Counters;
  /**
   * Optional: the delivery engine's limits (caps of unacknowledged entries, ...): the deployment's
   * settings; default DEFAULT_ENGINE_LIMITS; tests lower them.
   */
  readonly engineLimits?: EngineLimits;
  /** Optional: the wait after a lost claim (see EngineContext.pauseAfterConflict); default none. */
  readonly pauseAfterConflict?: (attempt: number) => Promise<void>;
  /**
   * Optional: waits `ms` (a receive whose consumer is at its cap of unacknowledged entries looks
   * again after a moment, without taking the doorbell's rings from the others); default: no wait.
   */
  readonly sleep?: (ms: number) => Promise<void>;
}
