/**
 * Quotes a user-supplied value for an error message: JSON string syntax, so control characters,
 * quotes and trailing spaces stay visible instead of corrupting the message.
 */
export function quote(value: unknown): string {
  return JSON.stringify(typeof value === 'bigint' ? `${value}` : String(value));
}
