import { describe, expect, it } from 'vitest';
import { MessageId as AcklineMessageId } from '../../../shared/domain/message-id.ts';
import {
  fieldsOf,
  fromAckline,
  isEarliest,
  isLatest,
  MessageId,
  toAckline,
} from '../../../shared/pulsar-client/message-id.ts';
import { decodeMessageIdData } from '../../../shared/pulsar-client/message-id-data.ts';

// MessageIdData (PulsarApi.proto): ledgerId = 1 and entryId = 2 (uint64), partition = 3 and
// batch_index = 4 (int32, default -1), ack_set = 5, batch_size = 6, first_chunk_message_id = 7.
// The expected bytes are worked out by hand from the protobuf encoding: tag = field << 3 | wire type.

const hex = (id: MessageId) => id.serialize().toString('hex');

describe('pulsar-client MessageId', () => {
  it.each([
    [
      '(12,3,-1,-1): ledgerId and entryId only, as the C++ client writes them',
      { ledgerId: 12n, entryId: 3n, partition: -1, batchIndex: -1 },
      '080c1003',
    ],
    [
      '(12,3,2,-1): with the partition',
      { ledgerId: 12n, entryId: 3n, partition: 2, batchIndex: -1 },
      '080c10031802',
    ],
    [
      '(300,0,-1,5): a two-byte varint and a batch index',
      { ledgerId: 300n, entryId: 0n, partition: -1, batchIndex: 5 },
      '08ac0210002005',
    ],
  ])('serializes %s', (_name, fields, bytes) => {
    const id = new MessageId(fields);
    expect(hex(id)).toBe(bytes);
    expect(fieldsOf(MessageId.deserialize(Buffer.from(bytes, 'hex')))).toEqual(fields);
  });

  it('earliest is (-1,-1,-1,-1), sent as unsigned 64-bit -1; latest is Long.MAX_VALUE twice', () => {
    expect(MessageId.earliest().toString()).toBe('(-1,-1,-1,-1)');
    expect(hex(MessageId.earliest())).toBe(`08${'ff'.repeat(9)}0110${'ff'.repeat(9)}01`);
    expect(MessageId.latest().toString()).toBe('(9223372036854775807,9223372036854775807,-1,-1)');
    expect(hex(MessageId.latest())).toBe(`08${'ff'.repeat(8)}7f10${'ff'.repeat(8)}7f`);
    expect(isEarliest(MessageId.deserialize(MessageId.earliest().serialize()))).toBe(true);
    expect(isLatest(MessageId.deserialize(MessageId.latest().serialize()))).toBe(true);
    expect(isLatest(MessageId.earliest())).toBe(false);
  });

  it("deserializes a Java client's bytes, skipping ack_set, batch_size and first_chunk_message_id", () => {
    // ledgerId 5, entryId 7, partition 1, batch_index 2, ack_set [3], batch_size 10, first_chunk {1:1, 2:2}
    const java = Buffer.from('0805100718012002280330' + '0a' + '3a0408011002', 'hex');
    expect(MessageId.deserialize(java).toString()).toBe('(5,7,1,2)');
  });

  it.each([
    ['truncated', '08'],
    ['without entryId', '0805'],
    ['a length past the end', '080510073a05'],
    ['an unknown wire type', '08051007' + '0b'],
  ])('refuses bytes that are not a MessageIdData: %s', (_name, bytes) => {
    expect(() => decodeMessageIdData(Buffer.from(bytes, 'hex'))).toThrow('Invalid MessageIdData');
  });

  it("converts to and from the SDK's ledgerId:entryId:partitionIndex, and refuses earliest and latest", () => {
    const sdk = AcklineMessageId.parse('12:3:1');
    expect(fromAckline(sdk).toString()).toBe('(12,3,1,-1)');
    expect(toAckline(fromAckline(sdk)).toString()).toBe('12:3:1');
    expect(() => toAckline(MessageId.earliest())).toThrow('names no message');
    expect(() => toAckline(MessageId.latest())).toThrow('names no message');
    expect(() => fieldsOf({ serialize: () => Buffer.alloc(0) } as unknown as MessageId)).toThrow(
      'Invalid MessageId',
    );
  });
});
