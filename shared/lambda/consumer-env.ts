/**
 * The environment variable `acklineConsumer()` reads the consumer id from when
 * it is given none (the AcklineSubscriptionConsumer CDK construct sets it).
 */
export const CONSUMER_ID_ENV = 'ACKLINE_CONSUMER_ID';
