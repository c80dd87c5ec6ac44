/** Moved to the domain (shared/domain/subscription-name.ts); kept so existing imports work. */
export { type InitialPosition, validateSubscriptionName } from '../domain/subscription-name.ts';
