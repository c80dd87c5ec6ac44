/**
 * A message as every consumer gets it: HTTP receive and event-driven (Lambda) consumers. Plain
 * data (JSON as it stands), so it crosses a Lambda invocation unchanged; this file imports
 * nothing, so the `@ackline/lambda` package that re-exports it stays free of dependencies.
 */
export interface ConsumerMessage {
  readonly messageId: string;
  readonly payload: string;
  readonly key: string | null;
  readonly properties: Readonly<Record<string, string>>;
  readonly redeliveryCount: number;
  readonly publishTime: number;
  readonly eventTime: number | null;
  /** `base64` when the payload is bytes (base64 in `payload`); absent for UTF-8 text. */
  readonly payloadEncoding?: 'base64';
  /** The producer that published it; absent for messages stored before producer names were. */
  readonly producerName?: string;
}

/**
 * How the messages of one batch may be processed, from the subscription's type: one after another
 * (Exclusive, Failover), one key after another (Key_Shared: keys in parallel, each key's messages
 * in order), or all at once (Shared).
 */
export type BatchOrder = 'sequential' | 'byKey' | 'concurrent';
