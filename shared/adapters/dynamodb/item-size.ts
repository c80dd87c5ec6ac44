import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * An item's size as DynamoDB counts it for capacity: each attribute's name (UTF-8 bytes) plus its
 * value. Strings and binaries by their bytes, a number about one byte per two significant digits
 * plus one, a boolean or null one byte, a list or map 3 bytes plus one per element and its
 * elements, a set its elements
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 * An estimate to the byte for numbers; exact otherwise. Pure, linear in the item.
 */
export function itemBytes(item: Record<string, AttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + valueBytes(value);
  return bytes;
}

/** Write units of a write billed on an item of `bytes`: one per started KB, at least one. */
export function writeUnitsOf(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
  if (value.M !== undefined) return 3 + Object.keys(value.M).length + itemBytes(value.M);
  return 0;
}

/** One byte per two significant digits, plus one (leading and trailing zeros do not count). */
function numberBytes(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '');
  const significant = digits.replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, significant.length) / 2) + 1;
}
