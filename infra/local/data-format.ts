import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AcklineError } from '../../shared/domain/errors.ts';

/**
 * The layout of what the embedded stack stores: 2 is the delivery engine (heads, pages, tracker).
 * Closed ledgers in items of their own (docs/design/storage.md#closed-ledgers) need no new format:
 * a ledger state written before them is read as it is and migrated by its next rollover.
 */
export const DATA_FORMAT = '2';
const FORMAT_FILE = 'ackline-format';

/** A data directory written by another version of ackline's storage layout. */
export class DataFormatError extends AcklineError {}

/**
 * Refuses a data directory whose stored cursors this version cannot read: one with DynamoDB data
 * but no format file was written by the token engine (before the delivery engine), whose cursor
 * items have another shape. A new directory gets the format file. Nothing is deployed that would
 * need a migration: the message says to move the directory away.
 * @throws DataFormatError
 */
export async function checkDataFormat(dataDir: string): Promise<void> {
  const file = join(dataDir, FORMAT_FILE);
  const format = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
  if (format === DATA_FORMAT) return;
  const hasData = await access(join(dataDir, 'dynamodb')).then(
    () => true,
    () => false,
  );
  if (format === undefined && !hasData) {
    await writeFile(file, `${DATA_FORMAT}\n`);
    return;
  }
  throw new DataFormatError(
    `data directory ${dataDir} was written by an older ackline (storage format ${format ?? '1, the token delivery engine'}; ` +
      `this version reads format ${DATA_FORMAT}): its subscriptions' cursors cannot be read. ` +
      `Move it away (mv ${dataDir} ${dataDir}.old) or delete it, then start again: a new one is created.`,
  );
}
