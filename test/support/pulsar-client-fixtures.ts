import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { AcklineAdmin } from '../../shared/index.ts';
import * as Pulsar from '../../shared/pulsar-client/index.ts';
import { SUPERUSER_ROLE, tokenFor } from './admin-fixtures.ts';

/**
 * Helpers of the suites that re-express apache/pulsar-client-node's tests (v1.18.0) against
 * `ackline/pulsar-client` on the shared embedded stack. pulsar-client's tests use fixed topic names
 * on a fresh standalone; these suites share one stack and run in parallel, so names get a suffix.
 */

export { Pulsar };

/** A pulsar-client `Client` on the shared stack, authenticated as the superuser (pulsar-client's tests run without auth). */
export function pulsarClient(config: Partial<Pulsar.ClientConfigBase> = {}): Pulsar.Client {
  return new Pulsar.Client({
    serviceUrl: inject('acklineUrl'),
    operationTimeoutSeconds: 30,
    authentication: new Pulsar.AuthenticationToken({ token: tokenFor(SUPERUSER_ROLE) }),
    ...config,
  });
}

/** `persistent://public/default/<label>-<unique>`: pulsar-client's tests name topics in public/default. */
export function uniqueTopic(label: string): string {
  return `persistent://public/default/${label}-${randomUUID().slice(0, 8)}`;
}

/** The admin client, for what pulsar-client's tests do over the admin REST API (http_utils.js). */
export function admin(): AcklineAdmin {
  return AcklineAdmin.builder()
    .serviceHttpUrl(inject('acklineUrl'))
    .authToken(tokenFor(SUPERUSER_ROLE))
    .build();
}

/** `lodash.difference(a, b)`, which pulsar-client's tests use to compare what was sent and received. */
export function difference<T>(a: readonly T[], b: readonly T[]): T[] {
  const seen = new Set(b);
  return a.filter((item) => !seen.has(item));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The partition of a pulsar-client message id string `(ledgerId,entryId,partition,batchIndex)`. */
export function partitionOf(messageId: Pulsar.MessageId): number {
  return Number(messageId.toString().replace(/[()]/g, '').split(',')[2]);
}
