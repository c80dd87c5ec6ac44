import { CliError } from './cli-context.ts';

const SECONDS_BY_UNIT: Readonly<Record<string, number>> = {
  s: 1,
  m: 60,
  h: 3_600,
  d: 86_400,
  w: 604_800,
  y: 31_536_000,
};

const RELATIVE_TIME = /^(\d+)([smhdwy]?)$/;

/**
 * Parses a duration as pulsar-admin's `RelativeTimeUtil`: a number and a unit `s`, `m`, `h`, `d`,
 * `w` or `y` (365 days); no unit means seconds. 0 only with `allowZero` (reset-cursor and
 * expire-messages take it, as pulsar-admin does).
 *
 * @example
 * parseRelativeTimeSeconds('30d'); // 2592000
 */
export function parseRelativeTimeSeconds(
  text: string,
  options: { readonly allowZero?: boolean } = {},
): number {
  const match = RELATIVE_TIME.exec(text.trim());
  const seconds = match ? Number(match[1]) * SECONDS_BY_UNIT[match[2] || 's']! : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds < (options.allowZero ? 0 : 1)) {
    throw new CliError(
      `Invalid duration '${text}': expected a ${options.allowZero ? 'non-negative' : 'positive'} number with a unit s, m, h, d, w or y (e.g. 1h, 30d)`,
    );
  }
  return seconds;
}
