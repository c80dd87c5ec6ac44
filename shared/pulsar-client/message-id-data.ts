/**
 * Pulsar's `MessageIdData` protobuf message (PulsarApi.proto), the bytes `MessageId.serialize()`
 * answers in every Pulsar client:
 *
 *     message MessageIdData {
 *       required uint64 ledgerId = 1;  required uint64 entryId = 2;
 *       optional int32 partition = 3 [default = -1];  optional int32 batch_index = 4 [default = -1];
 *       repeated int64 ack_set = 5;  optional int32 batch_size = 6;  optional MessageIdData first_chunk_message_id = 7;
 *     }
 *
 * Written as the C++ client writes it (pulsar-client-node serializes through it): ledgerId and
 * entryId always, partition and batch_index only when not -1. Read leniently: unknown fields are
 * skipped, so ids serialized by a Java client (which may carry ack_set or batch_size) deserialize.
 */

/** The fields of `MessageIdData` that name a message. `ledgerId`/`entryId` are signed, as the clients keep them. */
export interface MessageIdFields {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
  readonly partition: number;
  readonly batchIndex: number;
}

const WIRE_VARINT = 0;
const WIRE_64BIT = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_32BIT = 5;
const UINT64 = 1n << 64n;

/** Encodes the fields as `MessageIdData` bytes. */
export function encodeMessageIdData(fields: MessageIdFields): Buffer {
  const bytes: number[] = [];
  writeField(bytes, 1, BigInt.asUintN(64, fields.ledgerId));
  writeField(bytes, 2, BigInt.asUintN(64, fields.entryId));
  if (fields.partition !== -1) writeField(bytes, 3, BigInt.asUintN(64, BigInt(fields.partition)));
  if (fields.batchIndex !== -1) writeField(bytes, 4, BigInt.asUintN(64, BigInt(fields.batchIndex)));
  return Buffer.from(bytes);
}

/**
 * Decodes `MessageIdData` bytes.
 * @throws Error when the bytes are not a `MessageIdData` (truncated, or without ledgerId and entryId).
 */
export function decodeMessageIdData(data: Uint8Array): MessageIdFields {
  const reader = { data, offset: 0 };
  let ledgerId: bigint | undefined;
  let entryId: bigint | undefined;
  let partition = -1;
  let batchIndex = -1;
  while (reader.offset < data.length) {
    const tag = Number(readVarint(reader));
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (wireType !== WIRE_VARINT) {
      skip(reader, wireType);
      continue;
    }
    const value = readVarint(reader);
    if (field === 1) ledgerId = BigInt.asIntN(64, value);
    else if (field === 2) entryId = BigInt.asIntN(64, value);
    else if (field === 3) partition = Number(BigInt.asIntN(32, value));
    else if (field === 4) batchIndex = Number(BigInt.asIntN(32, value));
  }
  if (ledgerId === undefined || entryId === undefined) {
    throw new Error('Invalid MessageIdData: ledgerId and entryId are required');
  }
  return { ledgerId, entryId, partition, batchIndex };
}

function writeField(bytes: number[], field: number, value: bigint): void {
  writeVarint(bytes, BigInt((field << 3) | WIRE_VARINT));
  writeVarint(bytes, value);
}

function writeVarint(bytes: number[], value: bigint): void {
  let rest = value;
  while (rest >= 0x80n) {
    bytes.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  bytes.push(Number(rest));
}

interface Reader {
  readonly data: Uint8Array;
  offset: number;
}

function readVarint(reader: Reader): bigint {
  let value = 0n;
  for (let shift = 0n; shift < 70n; shift += 7n) {
    const byte = reader.data[reader.offset];
    if (byte === undefined) throw new Error('Invalid MessageIdData: truncated varint');
    reader.offset += 1;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return value % UINT64;
  }
  throw new Error('Invalid MessageIdData: varint longer than 10 bytes');
}

function skip(reader: Reader, wireType: number): void {
  let length: number;
  if (wireType === WIRE_64BIT) length = 8;
  else if (wireType === WIRE_32BIT) length = 4;
  else if (wireType === WIRE_LENGTH_DELIMITED) length = Number(readVarint(reader));
  else throw new Error(`Invalid MessageIdData: wire type ${wireType}`);
  if (reader.offset + length > reader.data.length) throw new Error('Invalid MessageIdData: truncated field');
  reader.offset += length;
}
