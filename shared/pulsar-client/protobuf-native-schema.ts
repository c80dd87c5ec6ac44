import { needsBinaryProtocol } from './binary-protocol.ts';
import type { SchemaInfo } from './types.ts';

/** Options of pulsar-client's `ProtobufNativeSchema.createSchemaInfoFromRoot`. */
export interface CreateSchemaInfoFromRootOptions {
  root: unknown;
  rootMessageTypeName: string;
  rootFileDescriptorName: string;
  schemaType?: 'ProtobufNative';
  syntax?: 'proto3' | 'proto2' | string;
  name?: string;
  properties?: Record<string, string>;
}

/**
 * pulsar-client's `ProtobufNativeSchema` helpers. Schemas other than bytes and strings live in
 * Pulsar's schema registry, reached through its binary protocol: both functions throw saying so.
 */
export const ProtobufNativeSchema = {
  createRootFromJson(_rootJson: Record<string, unknown>): never {
    throw needsBinaryProtocol('ProtobufNativeSchema (a ProtobufNative schema)');
  },
  createSchemaInfoFromRoot(_options: CreateSchemaInfoFromRootOptions): SchemaInfo {
    throw needsBinaryProtocol('ProtobufNativeSchema (a ProtobufNative schema)');
  },
};
