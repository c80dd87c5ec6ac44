import { EngineCursorView } from '../../shared/application/engine/cursor-view.ts';
import { DEFAULT_ENGINE_LIMITS } from '../../shared/application/engine/engine-context.ts';
import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';
import { RedeliveryBackoffRegistry } from '../../shared/domain/redelivery-backoff-registry.ts';
import type { CounterName } from '../../shared/ports/counters.ts';
import { InMemoryActivityIndex } from './in-memory-activity-index.ts';
import { InMemoryAuditLog } from './in-memory-audit-log.ts';
import { InMemoryDeletionJobs } from './in-memory-deletion-jobs.ts';
import { InMemoryDeliveryQueue } from './in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from './in-memory-dispatch-store.ts';
import { InMemoryHandleKeyStore } from './in-memory-handle-key-store.ts';
import { InMemoryLedger } from './in-memory-ledger.ts';
import { InMemoryPermissionStore } from './in-memory-permission-store.ts';
import { InMemoryPolicyStore } from './in-memory-policy-store.ts';
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
 * Use-case ports over the in-memory fakes, for unit tests: each part can be
 * replaced; the scheduler and the consumer registry are unused unless given.
 * Counters add up into `counted`; ids count up (`id-1`, `id-2`...).
 */
export function inMemoryPorts(parts: Partial<UseCasePorts> = {}): {
  ports: UseCasePorts;
  counted: Map<CounterName, number>;
} {
  const counted = new Map<CounterName, number>();
  let nextId = 0;
  const clock = parts.clock ?? new ManualClock(1_700_000_000_000);
  const ledger = parts.ledger ?? new InMemoryLedger(1000);
  const dispatch = parts.dispatch ?? new InMemoryDispatchStore();
  const ports: UseCasePorts = {
    catalog: new InMemoryTopicCatalog(),
    tenants: new InMemoryTenantCatalog(),
    ledger,
    cursors: new EngineCursorView({ store: dispatch, ledger, clock, limits: DEFAULT_ENGINE_LIMITS }),
    dispatch,
    permissions: new InMemoryPermissionStore(),
    audit: new InMemoryAuditLog(),
    policies: new InMemoryPolicyStore(),
    deliveryQueue: new InMemoryDeliveryQueue(),
    scheduler: unusedPort('scheduler'),
    consumers: unusedPort('consumers'),
    handleKeys: new InMemoryHandleKeyStore(),
    deletions: new InMemoryDeletionJobs(),
    activity: new InMemoryActivityIndex(),
    backoffs: RedeliveryBackoffRegistry.withBuiltIns(),
    clock,
    ids: { newId: () => `id-${++nextId}` },
    settings: { clusterName: 'standalone' },
    counters: { add: (name, value) => counted.set(name, (counted.get(name) ?? 0) + value) },
    ...parts,
  };
  return { ports, counted };
}
