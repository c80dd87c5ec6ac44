import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DELIVERY_HANDLE_KEY_BYTES,
  DELIVERY_HANDLE_PREFIX,
  type DeliveryHandle,
  DeliveryHandleSigner,
  InvalidDeliveryHandleError,
} from '../../../shared/domain/delivery-handle.ts';
import { ValidationError } from '../../../shared/domain/errors.ts';

const key = Buffer.alloc(DELIVERY_HANDLE_KEY_BYTES, 7);
const otherKey = Buffer.alloc(DELIVERY_HANDLE_KEY_BYTES, 8);
const handles = new DeliveryHandleSigner(key);

const handle: DeliveryHandle = {
  cursorId: 'cursor-1',
  ledgerId: '12',
  entryId: '3',
  partitionIndex: -1,
  redeliveryCount: 2,
};

/** The parts of an issued handle, to tamper with as a client could. */
function partsOf(text: string): { payload: unknown[]; tag: string } {
  const [payload, tag] = text.slice(DELIVERY_HANDLE_PREFIX.length).split('.') as [string, string];
  return { payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[], tag };
}

/** A handle with the payload a client chose and the tag of a genuine one. */
function withPayload(payload: unknown[], tag: string): string {
  return `${DELIVERY_HANDLE_PREFIX}${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${tag}`;
}

/** The tag as the format documents it, computed here independently of the signer. */
function documentedTag(payload: string): string {
  return createHmac('sha256', key)
    .update(`${DELIVERY_HANDLE_PREFIX}${payload}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/** The unsigned format of earlier versions: base64url JSON [cursorId, receipt, ledger, entry, partition, count]. */
function unsignedHandle(h: DeliveryHandle): string {
  return Buffer.from(
    JSON.stringify([h.cursorId, '-', h.ledgerId, h.entryId, h.partitionIndex, h.redeliveryCount]),
  ).toString('base64url');
}

describe('delivery handles', () => {
  it.each<[string, DeliveryHandle]>([
    ['a non-partitioned topic', handle],
    ['a partition', { ...handle, partitionIndex: 4 }],
    ['ids past 2^53', { ...handle, ledgerId: '9223372036854775807', entryId: '9007199254740993' }],
    ['a cursor id with quotes and non-ASCII', { ...handle, cursorId: 'c"ü😀' }],
  ])('verifies what it issued, for %s', (_label, issued) => {
    const text = handles.issue(issued);

    expect(text.startsWith(DELIVERY_HANDLE_PREFIX)).toBe(true);
    expect(text).toMatch(/^[A-Za-z0-9_.-]+$/); // URL-safe, opaque
    expect(handles.verify(text)).toStrictEqual(issued);
  });

  it('verifies with another signer over the same key (another process of the deployment)', () => {
    expect(new DeliveryHandleSigner(Buffer.from(key)).verify(handles.issue(handle))).toStrictEqual(handle);
  });

  it.each<[string, Partial<DeliveryHandle>]>([
    ['the cursor id', { cursorId: 'cursor-2' }],
    ['the ledger (another topic’s)', { ledgerId: '13' }],
    ['the entry (one not written yet)', { entryId: '4' }],
    ['the partition index', { partitionIndex: 0 }],
    ['the redelivery count', { redeliveryCount: 9 }],
  ])('refuses a genuine handle whose payload names another %s', (_label, change) => {
    const { tag } = partsOf(handles.issue(handle));
    const changed = { ...handle, ...change };
    const forged = withPayload(
      [changed.cursorId, changed.ledgerId, changed.entryId, changed.partitionIndex, changed.redeliveryCount],
      tag,
    );

    expect(() => handles.verify(forged)).toThrow(InvalidDeliveryHandleError);
    expect(() => handles.verify(forged)).toThrow(/not a handle this server issued/);
  });

  it('refuses every single-character change of a genuine handle', () => {
    const text = handles.issue(handle);
    for (let i = 0; i < text.length; i++) {
      const replacement = text[i] === 'A' ? 'B' : 'A';
      const changed = `${text.slice(0, i)}${replacement}${text.slice(i + 1)}`;
      expect(() => handles.verify(changed), `position ${i}`).toThrow(InvalidDeliveryHandleError);
    }
  });

  it.each<[string, () => string]>([
    ['signed with another key (another deployment)', () => new DeliveryHandleSigner(otherKey).issue(handle)],
    ['of the unsigned format of earlier versions', () => unsignedHandle(handle)],
    ['with a version prefix this server does not issue', () => `dh2.${handles.issue(handle).slice(4)}`],
    ['without its tag', () => handles.issue(handle).split('.').slice(0, 2).join('.')],
    ['with a truncated tag', () => handles.issue(handle).slice(0, -2)],
    ['with a tag one character longer', () => `${handles.issue(handle)}A`],
    ['with a part added', () => `${handles.issue(handle)}.x`],
    ['with an empty payload', () => `${DELIVERY_HANDLE_PREFIX}.${partsOf(handles.issue(handle)).tag}`],
    ['of the prefix alone', () => DELIVERY_HANDLE_PREFIX],
    ['empty', () => ''],
    ['with padding characters', () => `${handles.issue(handle)}==`],
    ['of garbage', () => 'Zm9yZ2Vk'],
  ])('refuses a handle %s', (_label, make) => {
    const text = make();

    expect(() => handles.verify(text)).toThrow(InvalidDeliveryHandleError);
    expect(() => handles.verify(text)).toThrow(/not a handle this server issued/);
  });

  it('refuses with a 400 family error that quotes the start of the handle', () => {
    const text = `${'x'.repeat(100)}"`;

    expect(() => handles.verify(text)).toThrow(ValidationError);
    expect(() => handles.verify(text)).toThrow(`Delivery handle "${'x'.repeat(40)}" is not a handle`);
  });

  it('is dh1.<payload>.<tag>, the tag the first 16 bytes of HMAC-SHA256(key, "dh1.<payload>")', () => {
    const payload = Buffer.from(JSON.stringify(['cursor-1', '12', '3', -1, 2])).toString('base64url');

    expect(handles.issue(handle)).toBe(`${DELIVERY_HANDLE_PREFIX}${payload}.${documentedTag(payload)}`);
  });

  it.each<[string, unknown[]]>([
    ['four fields', ['c', '1', '2', -1]],
    ['a ledger id that is not decimal', ['c', 'x', '2', -1, 0]],
    ['a negative redelivery count', ['c', '1', '2', -1, -1]],
    ['a fractional partition index', ['c', '1', '2', 0.5, 0]],
  ])('refuses %s even under a valid tag (nothing this code issues)', (_label, fields) => {
    const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');

    expect(() => handles.verify(`${DELIVERY_HANDLE_PREFIX}${payload}.${documentedTag(payload)}`)).toThrow(
      InvalidDeliveryHandleError,
    );
  });

  it('refuses a key shorter than 32 bytes', () => {
    expect(() => new DeliveryHandleSigner(Buffer.alloc(16))).toThrow(/32 bytes/);
  });
});
