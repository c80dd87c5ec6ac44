/**
 * The environment variable `acklineConsumer()` reads the consumer id from when
 * it is given none.
 */
export const CONSUMER_ID_ENV = 'ACKLINE_CONSUMER_ID';

/**
 * The topic and subscription whose event-driven consumer the function is (the
 * AcklineSubscriptionConsumer CDK construct sets them): `acklineConsumer()`
 * finds the consumer subscribed there with `consumerKind: "lambda"`.
 */
export const TOPIC_ENV = 'ACKLINE_TOPIC';
/** See {@link TOPIC_ENV}. */
export const SUBSCRIPTION_ENV = 'ACKLINE_SUBSCRIPTION';
/** The consumer's `consumerName`, when the subscription has several event-driven consumers. */
export const CONSUMER_NAME_ENV = 'ACKLINE_CONSUMER_NAME';
