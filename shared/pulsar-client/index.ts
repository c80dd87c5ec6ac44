/**
 * `ackline/pulsar-client`: the API of the `pulsar-client` npm package (apache/pulsar-client-node
 * v1.18.0, commit 7173cc31) over ackline's HTTP API. Code written for pulsar-client runs when its
 * import changes and `serviceUrl` is ackline's URL; docs/from-pulsar-client.md lists every difference.
 *
 * @example
 * const Pulsar = require('ackline/pulsar-client'); // or: import Pulsar from 'ackline/pulsar-client';
 * const client = new Pulsar.Client({ serviceUrl: 'http://127.0.0.1:8080' });
 */

import {
  AthenzX509Config,
  AuthenticationAthenz,
  AuthenticationBasic,
  AuthenticationOauth2,
  AuthenticationTls,
  AuthenticationToken,
} from './authentication.ts';
import { Client } from './client.ts';
import { Consumer } from './consumer.ts';
import { Message } from './message.ts';
import { MessageId } from './message-id.ts';
import { Producer } from './producer.ts';
import { ProtobufNativeSchema } from './protobuf-native-schema.ts';
import { Reader } from './reader.ts';
import { CryptoKeyReader, LogLevel } from './types.ts';

export type { AthenzConfig } from './authentication.ts';
export type { ConsumerConfig } from './consumer.ts';
export type { MessageRouter, ProducerConfig, TopicMetadata } from './producer.ts';
export type { ReaderConfig } from './reader.ts';
export type * from './types.ts';
export {
  AthenzX509Config,
  AuthenticationAthenz,
  AuthenticationBasic,
  AuthenticationOauth2,
  AuthenticationTls,
  AuthenticationToken,
  Client,
  Consumer,
  CryptoKeyReader,
  LogLevel,
  Message,
  MessageId,
  Producer,
  ProtobufNativeSchema,
  Reader,
};

/** What `require('pulsar-client')` answers, for `import Pulsar from 'ackline/pulsar-client'`. */
const Pulsar = {
  Client,
  Message,
  MessageId,
  CryptoKeyReader,
  AuthenticationTls,
  AuthenticationAthenz,
  AuthenticationToken,
  AuthenticationOauth2,
  AuthenticationBasic,
  ProtobufNativeSchema,
  LogLevel,
};
export default Pulsar;
