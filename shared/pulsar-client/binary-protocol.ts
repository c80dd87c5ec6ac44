import type { SchemaInfo } from './types.ts';

/** The schemas ackline carries: bytes (`None`, `Bytes`) and strings (`String`), as stored payloads. */
const PAYLOAD_SCHEMAS = new Set(['None', 'Bytes', 'String']);

/** The error of a setting that only Pulsar's binary protocol can serve. */
export function needsBinaryProtocol(what: string): Error {
  return new Error(`${what} needs Pulsar's binary protocol; ackline's HTTP API does not provide it`);
}

/**
 * Refuses end-to-end encryption and schemas other than bytes and strings: both live in Pulsar's
 * binary protocol (the message metadata and the schema registry), which ackline does not speak.
 */
export function refuseBinaryOnly(config: {
  readonly encryption: readonly unknown[];
  readonly schema: SchemaInfo | undefined;
  readonly failed: string;
}): void {
  if (config.encryption.some((setting) => setting !== undefined && setting !== null)) {
    throw needsBinaryProtocol(`${config.failed}: end-to-end encryption`);
  }
  const { schema } = config;
  if (schema !== undefined && schema !== null && !PAYLOAD_SCHEMAS.has(schema.schemaType)) {
    throw needsBinaryProtocol(`${config.failed}: schema ${String(schema.schemaType)}`);
  }
}
