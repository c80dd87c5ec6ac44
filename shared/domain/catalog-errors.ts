import { ConflictError, MethodNotAllowedError, NotFoundError, PreconditionFailedError } from './errors.ts';

/** Errors about topics, subscriptions and messages, worded as Pulsar's admin API words them. */

export class TopicNotFoundError extends NotFoundError {
  constructor(topic: string) {
    super(`Topic ${topic} not found`);
  }
}

export class TopicAlreadyExistsError extends ConflictError {
  constructor(topic: string) {
    super(`Topic ${topic} already exists`);
  }
}

export class SubscriptionNotFoundError extends NotFoundError {
  constructor(topic: string, subscription: string) {
    super(`Subscription ${subscription} not found on topic ${topic}`);
  }
}

export class SubscriptionAlreadyExistsError extends ConflictError {
  constructor(topic: string, subscription: string) {
    super(`Subscription ${subscription} already exists on topic ${topic}`);
  }
}

export class MessageNotFoundError extends NotFoundError {}

/** Exclusive and Failover subscriptions acknowledge cumulatively (PIP-423: 412). */
export class CumulativeAckSubscriptionError extends PreconditionFailedError {}

/** Admin calls that need stored messages do not apply to non-persistent topics (405). */
export class NonPersistentTopicError extends MethodNotAllowedError {}

/** Errors about tenants and namespaces, with the reasons Pulsar's admin API gives. */

export class TenantNotFoundError extends NotFoundError {
  constructor(tenant: string) {
    super(`Tenant ${tenant} does not exist`);
  }
}

export class TenantAlreadyExistsError extends ConflictError {
  constructor(tenant: string) {
    super(`Tenant ${tenant} already exists`);
  }
}

export class NamespaceNotFoundError extends NotFoundError {
  constructor(namespace: string) {
    super(`Namespace ${namespace} does not exist`);
  }
}

export class NamespaceAlreadyExistsError extends ConflictError {
  constructor(namespace: string) {
    super(`Namespace ${namespace} already exists`);
  }
}
