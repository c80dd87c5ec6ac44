import { describe, expect, it } from 'vitest';
import * as Ours from '../../../shared/pulsar-client/index.ts';
import type * as Theirs from '../../fixtures/pulsar-client/index.js';

// Issue 23: every class and method of pulsar-client's index.d.ts (v1.18.0, the fixture), typed the
// same. These aliases fail `npm run typecheck` when ackline/pulsar-client drifts from it: an instance
// of ours must be usable wherever code typed against pulsar-client expects one, and the settings
// objects written for pulsar-client must be accepted by ours.

type Assert<T extends true> = T;
type Assignable<A, B> = [A] extends [B] ? true : false;

type Checks = [
  // Every class, function and enum pulsar-client exports, ours exports by the same name.
  Assert<Assignable<Exclude<keyof typeof Theirs, 'default'>, keyof typeof Ours>>,
  Assert<Assignable<Ours.Client, Theirs.Client>>,
  Assert<Assignable<typeof Ours.Client.setLogHandler, typeof Theirs.Client.setLogHandler>>,
  Assert<Assignable<Ours.Producer, Theirs.Producer>>,
  Assert<Assignable<Ours.Consumer, Theirs.Consumer>>,
  Assert<Assignable<Ours.Reader, Theirs.Reader>>,
  Assert<Assignable<Ours.Message, Theirs.Message>>,
  Assert<Assignable<Ours.MessageId, Theirs.MessageId>>,
  Assert<Assignable<typeof Ours.MessageId, typeof Theirs.MessageId>>,
  Assert<Assignable<Ours.CryptoKeyReader, Theirs.CryptoKeyReader>>,
  Assert<Assignable<typeof Ours.ProtobufNativeSchema, typeof Theirs.ProtobufNativeSchema>>,
  // Settings written for pulsar-client are accepted by ours.
  Assert<Assignable<Theirs.ProducerConfig, Ours.ProducerConfig>>,
  Assert<Assignable<Theirs.ConsumerConfig, Ours.ConsumerConfig>>,
  Assert<Assignable<Theirs.ReaderConfig, Ours.ReaderConfig>>,
  Assert<Assignable<Theirs.ProducerMessage, Ours.ProducerMessage>>,
  Assert<Assignable<Theirs.ClientConfigBase['log'], Ours.ClientConfigBase['log']>>,
  Assert<Assignable<Theirs.SubscriptionType, Ours.SubscriptionType>>,
  Assert<Assignable<Theirs.SchemaType, Ours.SchemaType>>,
  Assert<Assignable<Theirs.MessageRoutingMode, Ours.MessageRoutingMode>>,
  Assert<Assignable<Theirs.ProducerAccessMode, Ours.ProducerAccessMode>>,
];

describe('ackline/pulsar-client beside pulsar-client v1.18.0', () => {
  it('types every class and method as pulsar-client does (checked by the type checker)', () => {
    const checks: Checks['length'] = 20;
    expect(checks).toBe(20);
  });

  it('exports what require("pulsar-client") answers, as the default export too', () => {
    expect(Object.keys(Ours.default).sort()).toEqual(
      [
        'AuthenticationAthenz',
        'AuthenticationBasic',
        'AuthenticationOauth2',
        'AuthenticationTls',
        'AuthenticationToken',
        'Client',
        'CryptoKeyReader',
        'LogLevel',
        'Message',
        'MessageId',
        'ProtobufNativeSchema',
      ].sort(),
    );
    expect(Ours.LogLevel.ERROR).toBe(3);
    expect(Ours.default.Client).toBe(Ours.Client);
  });
});
