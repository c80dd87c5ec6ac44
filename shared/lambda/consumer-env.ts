/**
 * The environment of a subscription runner, the function the AcklineSubscriptionConsumer CDK
 * construct deploys on a subscription's queues (functions/consumer-runner).
 */

/** The consumer the runner dispatches to, by the `consumerId` subscribe answered (instead of by names). */
export const CONSUMER_ID_ENV = 'ACKLINE_CONSUMER_ID';

/**
 * The topic and subscription whose event-driven consumer the runner dispatches to: the consumer
 * subscribed there with `consumerKind: "lambda"`.
 */
export const TOPIC_ENV = 'ACKLINE_TOPIC';
/** See {@link TOPIC_ENV}. */
export const SUBSCRIPTION_ENV = 'ACKLINE_SUBSCRIPTION';
/** The consumer's `consumerName`, when the subscription has several event-driven consumers. */
export const CONSUMER_NAME_ENV = 'ACKLINE_CONSUMER_NAME';
/** The user's function (its ARN), which the runner invokes with each batch. */
export const TARGET_FUNCTION_ENV = 'ACKLINE_TARGET_FUNCTION';
/** The user's function's timeout, in milliseconds. */
export const TARGET_TIMEOUT_MS_ENV = 'ACKLINE_TARGET_TIMEOUT_MS';
