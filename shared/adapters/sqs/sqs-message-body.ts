/**
 * A JSON text as an SQS message body. SQS accepts only the characters #x9, #xA,
 * #xD, #x20-#xD7FF, #xE000-#xFFFD and #x10000-#x10FFFF (it refuses the message
 * otherwise, InvalidMessageContents). JSON.stringify already escapes control
 * characters and lone surrogates; U+FFFE and U+FFFF it leaves as they are, so
 * they are escaped here (`\ufffe`): the same JSON value, which SQS takes.
 * Outside strings JSON has no such characters, so the text stays valid JSON.
 * Linear in the text's length.
 */
export function sqsMessageBody(json: string): string {
  return json.replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}
