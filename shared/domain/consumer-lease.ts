/**
 * How long an HTTP consumer stays alive without a call (Pulsar: until its connection drops). Every
 * call renews it; a consumer that makes none for its lease is gone: what it held comes back to the
 * others and an Exclusive/Failover owner is replaced. The subscribe body's `leaseMs` sets it.
 */

/** The lease of a consumer that sets none. */
export const DEFAULT_CONSUMER_LEASE_MS = 60_000;
/** The shortest lease a consumer may ask for: shorter would make a slow network look like a crash. */
export const MIN_CONSUMER_LEASE_MS = 10_000;
/** The longest lease a consumer may ask for: what a silent consumer held stays blocked this long. */
export const MAX_CONSUMER_LEASE_MS = 3_600_000;
