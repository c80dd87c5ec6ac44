/** A role that published, and when it last did. */
export interface RecentPublisher {
  readonly producerName: string;
  readonly lastPublishAtMs: number;
}

/** How many recent publishers a partition remembers. */
export const MAX_RECENT_PUBLISHERS = 8;

/**
 * `publishers` with `producerName` moved to the front at `atMs` (pure): newest first, one entry per
 * name, at most MAX_RECENT_PUBLISHERS.
 */
export function withPublisher(
  publishers: readonly RecentPublisher[],
  producerName: string,
  atMs: number,
): RecentPublisher[] {
  const others = publishers.filter((publisher) => publisher.producerName !== producerName);
  const previous = publishers.find((publisher) => publisher.producerName === producerName);
  const lastPublishAtMs = Math.max(atMs, previous?.lastPublishAtMs ?? atMs);
  return [{ producerName, lastPublishAtMs }, ...others]
    .sort((a, b) => b.lastPublishAtMs - a.lastPublishAtMs)
    .slice(0, MAX_RECENT_PUBLISHERS);
}
