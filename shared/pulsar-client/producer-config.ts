import { refuseBinaryOnly } from './binary-protocol.ts';
import type { ProducerConfig } from './producer.ts';
import type { ProducerAccessMode } from './types.ts';

const ACCESS_MODES: readonly ProducerAccessMode[] = [
  'Shared',
  'Exclusive',
  'WaitForExclusive',
  'ExclusiveWithFencing',
];

/**
 * Checks a producer's settings as pulsar-client does, with its messages; and refuses what ackline
 * cannot serve (encryption, schemas other than bytes and strings).
 * @throws Error naming the setting.
 */
export function checkProducerConfig(config: ProducerConfig): void {
  if (
    config === null ||
    typeof config !== 'object' ||
    typeof config.topic !== 'string' ||
    config.topic === ''
  ) {
    throw new Error('Topic is required and must be specified as a string when creating producer');
  }
  const failed = 'Failed to create producer';
  refuseBinaryOnly({
    encryption: [config.publicKeyPath, config.encryptionKey, config.encryptionKeys, config.cryptoKeyReader],
    schema: config.schema,
    failed,
  });
  if (config.accessMode !== undefined && !ACCESS_MODES.includes(config.accessMode)) {
    throw new Error(`${failed}: InvalidConfiguration (accessMode ${String(config.accessMode)})`);
  }
  checkPositive(config.batchingMaxMessages, 'batchingMaxMessages');
  checkPositive(config.batchingMaxAllowedSizeInBytes, 'batchingMaxAllowedSizeInBytes');
  if (
    config.batchingMaxPublishDelayMs !== undefined &&
    !(Number.isInteger(config.batchingMaxPublishDelayMs) && config.batchingMaxPublishDelayMs >= 0)
  ) {
    throw new Error(`${failed}: batchingMaxPublishDelayMs must be a whole number of milliseconds >= 0`);
  }
}

function checkPositive(value: number | undefined, what: string): void {
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
    throw new Error(`Failed to create producer: ${what} must be a positive integer`);
  }
}
