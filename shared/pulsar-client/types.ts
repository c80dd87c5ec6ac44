/**
 * The configuration types of `pulsar-client` (apache/pulsar-client-node v1.18.0, `index.d.ts`),
 * restated with the same names and shapes so code typed against that package type-checks against
 * `ackline/pulsar-client`. What ackline does with each setting is in docs/from-pulsar-client.md.
 */

import type { AuthenticationOption } from './authentication.ts';

/** Pulsar's log levels; `log` and `Client.setLogHandler` receive them. */
export enum LogLevel {
  DEBUG = 0,
  INFO = 1,
  WARN = 2,
  ERROR = 3,
}

/** A log callback, as `pulsar-client` calls it (`file` and `line` name the ackline module). */
export type LogHandler = (level: LogLevel, file: string, line: number, message: string) => void;

export type ClientConfig = ClientConfigBase &
  (
    | { serviceUrl: string; serviceUrlProvider?: never }
    | { serviceUrl?: never; serviceUrlProvider: AutoClusterFailoverConfig }
  );

export interface ClientConfigBase {
  authentication?: AuthenticationOption;
  operationTimeoutSeconds?: number;
  ioThreads?: number;
  messageListenerThreads?: number;
  concurrentLookupRequest?: number;
  tlsTrustCertsFilePath?: string;
  tlsCertificateFilePath?: string;
  tlsPrivateKeyFilePath?: string;
  tlsValidateHostname?: boolean;
  tlsAllowInsecureConnection?: boolean;
  statsIntervalInSeconds?: number;
  listenerName?: string;
  log?: LogHandler;
  logLevel?: LogLevel;
  connectionTimeoutMs?: number;
}

export type ServiceInfo =
  | string
  | { serviceUrl: string; authentication?: AuthenticationOption; tlsTrustCertsFilePath?: string };

export interface AutoClusterFailoverConfig {
  primary: ServiceInfo;
  secondary: ServiceInfo[];
  checkIntervalMs?: number;
  failoverThreshold?: number;
  switchBackThreshold?: number;
}

export interface ProducerMessage {
  data: Buffer;
  properties?: { [key: string]: string };
  eventTimestamp?: number;
  sequenceId?: number;
  partitionKey?: string;
  orderingKey?: string;
  replicationClusters?: string[];
  deliverAfter?: number;
  deliverAt?: number;
  disableReplication?: boolean;
}

export interface EncryptionKey {
  key: string;
  value: Buffer;
  metadata: { [key: string]: string };
}

export interface EncryptionContext {
  keys: EncryptionKey[];
  param: Buffer;
  algorithm: string;
  compressionType: CompressionType;
  uncompressedMessageSize: number;
  batchSize: number;
  isDecryptionFailed: boolean;
}

export interface SchemaInfo {
  schemaType: SchemaType;
  name?: string;
  schema?: string;
  properties?: Record<string, string>;
}

export interface DeadLetterPolicy {
  deadLetterTopic: string;
  maxRedeliverCount?: number;
  initialSubscriptionName?: string;
}

export interface ConsumerBatchReceivePolicy {
  maxNumMessages?: number;
  maxNumBytes?: number;
  timeoutMs?: number;
}

export interface ConsumerKeyShareStickyRange {
  start: number;
  end: number;
}
export type ConsumerKeyShareStickyRanges = ConsumerKeyShareStickyRange[];

export interface KeySharedPolicy {
  keyShareMode?: ConsumerKeyShareMode;
  allowOutOfOrderDelivery?: boolean;
  stickyRanges?: ConsumerKeyShareStickyRanges;
}

export interface EncryptionKeyInfo {
  key: Buffer;
  metadata: { [key: string]: string };
}

/** End-to-end encryption's key source; ackline refuses it (it needs Pulsar's binary protocol). */
export class CryptoKeyReader {
  getPublicKey(_keyName: string, _metadata: { [key: string]: string }): EncryptionKeyInfo {
    throw new Error('CryptoKeyReader.getPublicKey is not implemented: subclass CryptoKeyReader');
  }

  getPrivateKey(_keyName: string, _metadata: { [key: string]: string }): EncryptionKeyInfo {
    throw new Error('CryptoKeyReader.getPrivateKey is not implemented: subclass CryptoKeyReader');
  }
}

export type MessageRoutingMode = 'UseSinglePartition' | 'RoundRobinDistribution' | 'CustomPartition';
export type HashingScheme = 'Murmur3_32Hash' | 'BoostHash' | 'JavaStringHash';
export type CompressionType = 'None' | 'Zlib' | 'LZ4' | 'ZSTD' | 'SNAPPY';
export type ProducerBatchType = 'DefaultBatching' | 'KeyBasedBatching';
export type ProducerCryptoFailureAction = 'FAIL' | 'SEND';
export type SubscriptionType = 'Exclusive' | 'Shared' | 'KeyShared' | 'Failover';
export type InitialPosition = 'Latest' | 'Earliest';
export type ConsumerCryptoFailureAction = 'FAIL' | 'DISCARD' | 'CONSUME';
export type ConsumerKeyShareMode = 'AutoSplit' | 'Sticky';
export type RegexSubscriptionMode = 'PersistentOnly' | 'NonPersistentOnly' | 'AllTopics';
export type SchemaType =
  | 'None'
  | 'String'
  | 'Json'
  | 'Protobuf'
  | 'Avro'
  | 'Boolean'
  | 'Int8'
  | 'Int16'
  | 'Int32'
  | 'Int64'
  | 'Float32'
  | 'Float64'
  | 'KeyValue'
  | 'ProtobufNative'
  | 'Bytes'
  | 'AutoConsume'
  | 'AutoPublish';
export type ProducerAccessMode = 'Shared' | 'Exclusive' | 'WaitForExclusive' | 'ExclusiveWithFencing';
