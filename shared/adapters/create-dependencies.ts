import { randomBytes } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ContainerHints } from '../application/container-hints.ts';
import { EngineCursorView } from '../application/engine/cursor-view.ts';
import { DEFAULT_ENGINE_LIMITS } from '../application/engine/engine-context.ts';
import type { IdGenerator, UseCasePorts } from '../application/use-case-ports.ts';
import { type AcklineConfig, METRICS_NAMESPACE, serviceNameOf } from '../config/load-config.ts';
import { runTimeQueueTags } from '../config/resources.ts';
import { RoundRobinRouter } from '../domain/message-router.ts';
import { RedeliveryBackoffRegistry } from '../domain/redelivery-backoff-registry.ts';
import { API_REQUEST_RETRIES, BoundedRetryStrategy } from './bounded-retry-strategy.ts';
import { CachingConsumerRegistry, CONSUMER_RECORD_TTL_MS } from './caching-consumer-registry.ts';
import { CachingHandleKeyStore } from './caching-handle-key-store.ts';
import { CachingLedger, LEDGER_STATE_TTL_MS } from './caching-ledger.ts';
import { CATALOG_TTL_MS, CachingTopicCatalog } from './caching-topic-catalog.ts';
import { ClosedLedgerCache } from './dynamodb/closed-ledger-cache.ts';

import { DynamoDbActivityIndex } from './dynamodb/dynamodb-activity-index.ts';
import { DynamoDbAuditLog } from './dynamodb/dynamodb-audit-log.ts';
import { DynamoDbConsumerRegistry } from './dynamodb/dynamodb-consumer-registry.ts';
import { DynamoDbDelayedIndex } from './dynamodb/dynamodb-delayed-index.ts';
import { DynamoDbDeletionJobs } from './dynamodb/dynamodb-deletion-jobs.ts';
import { DynamoDbDispatchStore } from './dynamodb/dynamodb-dispatch-store.ts';
import { DynamoDbHandleKeyStore } from './dynamodb/dynamodb-handle-key-store.ts';
import { DynamoDbLedger } from './dynamodb/dynamodb-ledger.ts';
import { DynamoDbPermissionStore } from './dynamodb/dynamodb-permission-store.ts';
import { DynamoDbPolicyStore } from './dynamodb/dynamodb-policy-store.ts';
import { DynamoDbProducerAccessStore } from './dynamodb/dynamodb-producer-access.ts';
import { DynamoDbProducerSequenceStore } from './dynamodb/dynamodb-producer-sequences.ts';
import { DynamoDbTenantCatalog } from './dynamodb/dynamodb-tenant-catalog.ts';
import { DynamoDbTopicCatalog } from './dynamodb/dynamodb-topic-catalog.ts';
import { SqsDeliveryQueue } from './sqs/sqs-delivery-queue.ts';
import { SqsScheduler } from './sqs/sqs-scheduler.ts';
import { pauseAfterConflict, sleep, systemClock } from './system-clock.ts';
import { installedUsageMeter } from './usage-meter.ts';

/**
 * The composition root: builds every adapter once per cold start (or once per
 * embedded stack) from the configuration. Use cases receive ports, never this.
 */
export interface Dependencies {
  readonly config: AcklineConfig;
  readonly logger: Logger;
  /**
   * CloudWatch metrics in EMF (namespace `Ackline`, dimensions service and
   * stage), flushed at the end of each invocation. Off when POWERTOOLS_DEV is
   * true (the embedded stack) unless POWERTOOLS_METRICS_DISABLED says otherwise.
   */
  readonly metrics: Metrics;
  readonly ports: UseCasePorts;
  /** Round-robin partition choice for keyless messages, one per process as a Pulsar producer has one. */
  readonly router: RoundRobinRouter;
}

/** 16 random bytes, URL-safe: cursor and consumer ids. */
export const randomIds: IdGenerator = { newId: () => randomBytes(16).toString('base64url') };

/**
 * What both SDK clients share. `cacheMiddleware` resolves each command's
 * middleware stack once per client instead of on every send (about a twentieth
 * of the embedded stack's CPU per request went into rebuilding it): sound here
 * because nothing changes a stack after the first request (the usage meter
 * attaches its middleware right after construction, below). HTTP keeps the
 * SDK's defaults: keep-alive sockets, at most 50 per client.
 */
function clientSettings(config: AcklineConfig, options: DependencyOptions) {
  const retries = options.answersApiGateway
    ? {
        maxAttempts: API_REQUEST_RETRIES.maxAttempts,
        retryStrategy: new BoundedRetryStrategy(API_REQUEST_RETRIES),
      }
    : { maxAttempts: 5 };
  return { region: config.region, ...retries, cacheMiddleware: true } as const;
}

/** How the dependencies are built for the function that uses them. */
export interface DependencyOptions {
  /**
   * The function answers API Gateway (the admin and data APIs), which gives up after 29 s: its SDK
   * clients retry a failed call at most 3 times with short backoffs (API_REQUEST_RETRIES), so a
   * throttled key adds at most 1.4 s per call to an answer instead of up to 15 s. Default false:
   * the SDK's standard retries, 5 attempts (the scheduler, maintenance, the runner).
   */
  readonly answersApiGateway?: boolean;
}

export function createDependencies(
  config: AcklineConfig,
  serviceName: string,
  options: DependencyOptions = {},
): Dependencies {
  const logger = new Logger({ serviceName: serviceNameOf(serviceName) });
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: serviceNameOf(serviceName),
    defaultDimensions: { stage: config.stage },
  });
  const dynamodb = new DynamoDBClient({
    ...clientSettings(config, options),
    ...(config.endpoints.dynamodb ? { endpoint: config.endpoints.dynamodb } : {}),
  });
  const sqs = new SQSClient({
    ...clientSettings(config, options),
    ...(config.endpoints.sqs ? { endpoint: config.endpoints.sqs } : {}),
  });
  const meter = installedUsageMeter();
  if (meter) {
    meter.attachDynamoDb(dynamodb);
    meter.attachSqs(sqs);
  }
  const delayedIndex = new DynamoDbDelayedIndex(dynamodb, config.tables.catalog);
  const storedLedger = new DynamoDbLedger(dynamodb, {
    delayedIndex,
    catalogTable: config.tables.catalog,
    entriesTable: config.tables.entries,
    maxEntriesPerLedger: config.maxEntriesPerLedger,
    ...config.entryExpiry,
    clock: systemClock,
    // Closed ledgers never change: this process reads each once (no TTL; see ClosedLedgerCache).
    closedLedgers: new ClosedLedgerCache(),
  });
  const dispatch = new DynamoDbDispatchStore(dynamodb, config.tables.cursors);
  const engineLimits = {
    ...DEFAULT_ENGINE_LIMITS,
    maxUnackedPerConsumer: config.maxUnackedPerConsumer,
    maxUnackedPerSubscription: config.maxUnackedPerSubscription,
  };
  // This container's state (docs/design/delivery-engine.md#per-container-state): caches of the
  // catalog, the ledger and the consumer registry in front of their stores, each with its TTL, and
  // the hints the use cases keep between calls. All in memory, one set per cold start.
  const ledger = new CachingLedger(storedLedger, systemClock, LEDGER_STATE_TTL_MS);
  const ports: UseCasePorts = {
    catalog: new CachingTopicCatalog(
      new DynamoDbTopicCatalog(dynamodb, config.tables.catalog),
      systemClock,
      CATALOG_TTL_MS,
    ),
    tenants: new DynamoDbTenantCatalog(dynamodb, config.tables.catalog),
    ledger,
    delayedIndex,
    // Admin paths read and write the cursor through the engine's items: one truth for both.
    cursors: new EngineCursorView({
      store: dispatch,
      ledger: storedLedger,
      clock: systemClock,
      limits: engineLimits,
    }),
    dispatch,
    permissions: new DynamoDbPermissionStore(dynamodb, config.tables.catalog),
    audit: new DynamoDbAuditLog(dynamodb, config.tables.catalog, config.auditRetentionDays * 86_400_000),
    policies: new DynamoDbPolicyStore(dynamodb, config.tables.catalog),
    producerSequences: new DynamoDbProducerSequenceStore(dynamodb, config.tables.catalog),
    producerAccess: new DynamoDbProducerAccessStore(dynamodb, config.tables.catalog),
    deliveryQueue: new SqsDeliveryQueue(sqs, {
      queuePrefix: config.queuePrefix,
      maxDelaySeconds: config.maxDelaySeconds,
      tags: runTimeQueueTags(config.stage),
    }),
    scheduler: new SqsScheduler(sqs, config.schedulerQueueUrl, systemClock, config.maxDelaySeconds),
    consumers: new CachingConsumerRegistry(
      new DynamoDbConsumerRegistry(dynamodb, config.tables.catalog),
      systemClock,
      CONSUMER_RECORD_TTL_MS,
    ),
    // Read on the first receive or ack by handle, then kept: the key never changes once made.
    handleKeys: new CachingHandleKeyStore(new DynamoDbHandleKeyStore(dynamodb, config.tables.catalog)),
    deletions: new DynamoDbDeletionJobs(dynamodb, config.tables.catalog),
    activity: new DynamoDbActivityIndex(dynamodb, config.tables.catalog),
    backoffs: RedeliveryBackoffRegistry.withBuiltIns(),
    counters: { add: (name, value) => metrics.addMetric(name, MetricUnit.Count, value) },
    clock: systemClock,
    hints: new ContainerHints(systemClock),
    pauseAfterConflict,
    random: Math.random,
    sleep,
    engineLimits,
    ids: randomIds,
    settings: {
      clusterName: config.clusterName,
      defaultRetention: config.defaultRetention,
      entryExpiryMs: config.entryExpiry.entryExpiryMs,
    },
  };
  return { config, logger, metrics, ports, router: new RoundRobinRouter(randomBytes(2).readUInt16BE(0)) };
}
