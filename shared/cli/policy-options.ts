import { CliError } from './cli-context.ts';
import { parseRelativeTimeSeconds } from './relative-time.ts';

/** The options of pulsar-admin's `set-retention` (namespaces and topics alike). */
export interface RetentionOptions {
  readonly size: string;
  readonly time: string;
}

const MEGABYTES_BY_UNIT: Readonly<Record<string, number>> = { k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };

/**
 * pulsar-admin's `--size` and `--time` of a retention, as Pulsar's RetentionPolicies.
 * @example retentionOf({ size: '10G', time: '3d' }); // { retentionTimeInMinutes: 4320, retentionSizeInMB: 10240 }
 */
export function retentionOf(options: RetentionOptions): {
  retentionTimeInMinutes: number;
  retentionSizeInMB: number;
} {
  return {
    retentionTimeInMinutes: retentionMinutes(options.time),
    retentionSizeInMB: retentionMegabytes(options.size),
  };
}

/**
 * pulsar-admin's message TTL: seconds (`3600`) or a relative time (`1h`, `2d`); 0 for none.
 * @example ttlSecondsOf('1h'); // 3600
 */
export function ttlSecondsOf(text: string): number {
  return text.trim() === '0' ? 0 : parseRelativeTimeSeconds(text);
}

/** pulsar-admin's retention time: a relative time (`3h`), -1 for no limit, 0 for none; in minutes. */
function retentionMinutes(text: string): number {
  const trimmed = text.trim();
  if (trimmed === '-1' || trimmed === '0') return Number(trimmed);
  return Math.ceil(parseRelativeTimeSeconds(trimmed) / 60);
}

/** pulsar-admin's retention size: a number with a unit k, M, G or T (bytes without), -1 for no limit; in MB. */
function retentionMegabytes(text: string): number {
  const trimmed = text.trim();
  if (trimmed === '-1' || trimmed === '0') return Number(trimmed);
  const match = /^(\d+)([kKmMgGtT]?)$/.exec(trimmed);
  if (!match) throw new CliError(`Invalid size '${text}': expected e.g. 10M, 16G, 3T, or -1`);
  const unit = match[2]?.toLowerCase();
  const megabytes = unit
    ? Number(match[1]) * (MEGABYTES_BY_UNIT[unit] as number)
    : Number(match[1]) / (1024 * 1024);
  return Math.ceil(megabytes);
}
