import { CachingConsumerRegistry } from '../../shared/adapters/caching-consumer-registry.ts';
import { CachingLedger } from '../../shared/adapters/caching-ledger.ts';
import { CachingTopicCatalog } from '../../shared/adapters/caching-topic-catalog.ts';
import { ContainerHints } from '../../shared/application/container-hints.ts';
import { EngineCursorView } from '../../shared/application/engine/cursor-view.ts';
import { DEFAULT_ENGINE_LIMITS } from '../../shared/application/engine/engine-context.ts';
import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';
import { RedeliveryBackoffRegistry } from '../../shared/domain/redelivery-backoff-registry.ts';
import type { ConsumerRegistry } from '../../shared/ports/consumer-registry.ts';
import type { CounterName } from '../../shared/ports/counters.ts';
import type { Ledger } from '../../shared/ports/ledger.ts';
import type { ProducerAccessStore } from '../../shared/ports/producer-access.ts';
import type { TopicCatalog } from '../../shared/ports/topic-catalog.ts';
import { InMemoryActivityIndex } from './in-memory-activity-index.ts';
import { InMemoryAuditLog } from './in-memory-audit-log.ts';
import { InMemoryDelayedIndex } from './in-memory-delayed-index.ts';
import { InMemoryDeletionJobs } from './in-memory-deletion-jobs.ts';
import { InMemoryDeliveryQueue } from './in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from './in-memory-dispatch-store.ts';
import { InMemoryHandleKeyStore } from './in-memory-handle-key-store.ts';
import { InMemoryLedger } from './in-memory-ledger.ts';
import { InMemoryPermissionStore } from './in-memory-permission-store.ts';
import { InMemoryPolicyStore } from './in-memory-policy-store.ts';
import { InMemoryProducerAccessStore } from './in-memory-producer-access.ts';
import { InMemoryProducerSequenceStore } from './in-memory-producer-sequences.ts';
import { InMemoryTenantCatalog } from './in-memory-tenant-catalog.ts';
import { InMemoryTopicCatalog } from './in-memory-topic-catalog.ts';
import { ManualClock } from './manual-clock.ts';

/** A port the code under test must not touch: any use throws, naming the port and member. */
export function unusedPort<T extends object>(name: string, who = 'the code under test'): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      throw new Error(`${who} used ports.${name}.${String(property)}`);
    },
  });
}

/**
 * What a test may give {@link inMemoryPorts}: any of the ports, with the catalog, the ledger and
 * the consumer registry as stores (uncached: the container's caches are put in front of them).
 */
export type InMemoryPortParts = Partial<Omit<UseCasePorts, 'catalog' | 'ledger' | 'consumers'>> & {
  readonly catalog?: TopicCatalog;
  readonly ledger?: Ledger;
  readonly consumers?: ConsumerRegistry;
};

/**
 * Use-case ports over the in-memory fakes, for unit tests: each part can be
 * replaced; the scheduler and the consumer registry are unused unless given.
 * Counters add up into `counted`; ids count up (`id-1`, `id-2`...).
 *
 * One call is one container: its own caches in front of the catalog, the ledger and the consumer
 * registry (given or new), and its own ContainerHints unless `hints` is given. Two calls over the
 * same stores are two containers (see in-memory-processes.ts).
 */
export function inMemoryPorts(parts: InMemoryPortParts = {}): {
  ports: UseCasePorts;
  counted: Map<CounterName, number>;
} {
  const counted = new Map<CounterName, number>();
  let nextId = 0;
  const clock = parts.clock ?? new ManualClock(1_700_000_000_000);
  // A ledger given by the test indexes delayed messages only if it was built with an index.
  const delayedIndex = parts.delayedIndex ?? (parts.ledger ? undefined : new InMemoryDelayedIndex());
  const ledger = parts.ledger ?? new InMemoryLedger(1000, undefined, delayedIndex);
  const dispatch = parts.dispatch ?? new InMemoryDispatchStore();
  const ports: UseCasePorts = {
    tenants: new InMemoryTenantCatalog(),
    cursors: new EngineCursorView({ store: dispatch, ledger, clock, limits: DEFAULT_ENGINE_LIMITS }),
    dispatch,
    permissions: new InMemoryPermissionStore(),
    audit: new InMemoryAuditLog(),
    policies: new InMemoryPolicyStore(),
    producerSequences: new InMemoryProducerSequenceStore(),
    producerAccess:
      ledger instanceof InMemoryLedger
        ? new InMemoryProducerAccessStore(ledger.tables)
        : unusedPort<ProducerAccessStore>('producerAccess'),
    deliveryQueue: new InMemoryDeliveryQueue(),
    scheduler: unusedPort('scheduler'),
    handleKeys: new InMemoryHandleKeyStore(),
    deletions: new InMemoryDeletionJobs(),
    activity: new InMemoryActivityIndex(),
    backoffs: RedeliveryBackoffRegistry.withBuiltIns(),
    clock,
    ids: { newId: () => `id-${++nextId}` },
    settings: { clusterName: 'standalone' },
    counters: { add: (name, value) => counted.set(name, (counted.get(name) ?? 0) + value) },
    hints: new ContainerHints(clock),
    ...(delayedIndex ? { delayedIndex } : {}),
    ...parts,
    catalog: new CachingTopicCatalog(parts.catalog ?? new InMemoryTopicCatalog(), clock),
    ledger: new CachingLedger(ledger, clock),
    consumers: new CachingConsumerRegistry(parts.consumers ?? unusedPort('consumers'), clock),
  };
  return { ports, counted };
}
