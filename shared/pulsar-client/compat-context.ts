import type { AcklineClient } from '../client/ackline-client.ts';
import {
  AcklineClientArgumentError,
  AcklineClientClosedError,
  AcklineClientConnectionError,
  AcklineClientError,
  AcklineProducerBusyError,
  AcklineProducerFencedError,
} from '../client/errors.ts';
import type { CompatLogger } from './log.ts';

/** What a compat producer, consumer or reader shares with its client. */
export interface CompatContext {
  readonly sdk: AcklineClient;
  readonly logger: CompatLogger;
  /** Open producers, consumers and readers: `client.close()` closes them before the SDK client. */
  readonly open: Set<{ close(): Promise<null> }>;
  /**
   * The newest message id this client's producers got per topic partition (`topic|partition` ->
   * `[ledgerId, entryId]`): a reader's `hasNext()` counts it with what the server last told it.
   */
  readonly lastPublished: Map<string, readonly [bigint, bigint]>;
}

/**
 * The name of Pulsar's `Result` that a failure of ackline's HTTP API stands for, as pulsar-client
 * writes it after `Failed to <operation>: ` (e.g. `TopicNotFound`, `TimeOut`, `AlreadyClosed`). The
 * ackline reason follows in parentheses where there is one.
 */
export function resultOf(error: unknown): string {
  if (!(error instanceof AcklineClientError)) return `UnknownError (${String(error)})`;
  return `${resultName(error)} (${error.message})`;
}

function resultName(error: AcklineClientError): string {
  if (error instanceof AcklineClientClosedError) return 'AlreadyClosed';
  if (error instanceof AcklineClientArgumentError) return 'InvalidConfiguration';
  // pulsar-client writes this one with its prefix (its own tests expect `ResultProducerFenced`).
  if (error instanceof AcklineProducerFencedError) return 'ResultProducerFenced';
  if (error instanceof AcklineProducerBusyError) return 'ProducerBusy';
  if (error instanceof AcklineClientConnectionError) {
    return /timeout|timed out|aborted/i.test(error.message) ? 'TimeOut' : 'ConnectError';
  }
  switch (error.statusCode) {
    case 400:
      return 'InvalidMessage';
    case 401:
      return 'AuthenticationError';
    case 403:
      return 'AuthorizationError';
    case 404:
      return 'TopicNotFound';
    case 409:
      return 'ConsumerBusy';
    case 412:
      return 'NotAllowedError';
    case 413:
      return 'MessageTooBig';
    case 429:
      return 'TooManyLookupRequestException';
    case 503:
    case 504:
      return 'ServiceUnitNotReady';
    default:
      return 'UnknownError';
  }
}

/**
 * Rejects, as Pulsar does, a topic whose namespace does not exist (`TopicNotFound`). ackline itself
 * allows topics in namespaces nobody created (docs/admin-api.md); a role that may not read the
 * namespace skips the check (the server still decides on its permissions).
 */
export async function checkNamespaceExists(
  context: CompatContext,
  topic: { tenant: string; namespace: string },
  failed: string,
): Promise<void> {
  try {
    await context.sdk.admin().namespaces().getPolicies(`${topic.tenant}/${topic.namespace}`);
  } catch (error) {
    if (error instanceof AcklineClientError && error.statusCode === 404) {
      throw new Error(
        `${failed}: TopicNotFound (namespace ${topic.tenant}/${topic.namespace} does not exist)`,
        {
          cause: error,
        },
      );
    }
    if (error instanceof AcklineClientError && (error.statusCode === 401 || error.statusCode === 403)) return;
    throw new Error(`${failed}: ${resultOf(error)}`, { cause: error });
  }
}

/**
 * The topic's partition count (0: not partitioned, or not created yet: it will be created
 * non-partitioned by its first use, as Pulsar's auto-creation; or not readable by the role).
 */
export async function partitionCount(
  context: CompatContext,
  topic: string,
  failed: string,
  create = false,
): Promise<number> {
  try {
    const { partitions } = await context.sdk.admin().topics().getPartitionedTopicMetadata(topic);
    return partitions;
  } catch (error) {
    if (error instanceof AcklineClientError && error.statusCode === 404) {
      if (create) await createIfAbsent(context, topic);
      return 0;
    }
    // A role that may produce or consume but not read topic metadata (ackline keeps that to
    // superusers): the topic is used by its own name, and the server routes among its partitions.
    if (error instanceof AcklineClientError && (error.statusCode === 401 || error.statusCode === 403))
      return 0;
    throw new Error(`${failed}: ${resultOf(error)}`, { cause: error });
  }
}

/**
 * Creates the topic (non-partitioned), as a Pulsar producer's lookup auto-creates it, so a pattern
 * consumer finds it before its first message. A role that may not create topics, or a topic created
 * meanwhile, is no failure: the first publish creates it.
 */
async function createIfAbsent(context: CompatContext, topic: string): Promise<void> {
  await context.sdk
    .admin()
    .topics()
    .createNonPartitionedTopic(topic)
    .catch(() => undefined);
}
