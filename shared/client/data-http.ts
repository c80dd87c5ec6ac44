import { parseTopic, pathSegment, topicPathSegments } from './admin-paths.ts';
import {
  AcklineAdminArgumentError,
  AcklineClientArgumentError,
  AcklineClientConnectionError,
  AcklineClientError,
} from './errors.ts';
import { type HttpErrors, HttpTransport, type HttpTransportSettings } from './http-transport.ts';

const DATA_ERRORS: HttpErrors = {
  apiName: 'ackline data API',
  answer: (statusCode, reason, options) => new AcklineClientError(statusCode, reason, options),
  unreachable: (url, reason, options) => new AcklineClientConnectionError(url, reason, options),
};

/**
 * Sends the data API's calls (produce, HTTP consumers); failures are {@link AcklineClientError}s,
 * an unreachable server an {@link AcklineClientConnectionError}. Holds no connection state.
 */
export class DataHttp extends HttpTransport {
  constructor(settings: Omit<HttpTransportSettings, 'errors'>) {
    super({ ...settings, errors: DATA_ERRORS });
  }
}

/** A topic a producer or consumer was built for, resolved once. */
export interface DataTopic {
  /** The full name, e.g. `persistent://my-tenant/my-ns/orders`. */
  readonly name: string;
  /** The percent-encoded `{domain}/{tenant}/{namespace}/{topic}` of its REST paths. */
  readonly pathSegments: string;
}

/**
 * Resolves a topic name as Pulsar clients accept it: `persistent://tenant/ns/topic`, the short
 * `tenant/ns/topic`, or a bare `topic` (in `public/default`).
 * @throws AcklineClientArgumentError when it cannot be put in a URL path (the server checks the rest).
 */
export function dataTopic(topic: string): DataTopic {
  const { domain, tenant, namespace, localName } = asClientArgument(() => parseTopic(topic));
  return {
    name: `${domain}://${tenant}/${namespace}/${localName}`,
    pathSegments: topicPathSegments(topic),
  };
}

/** `POST /topics/{domain}/{tenant}/{namespace}/{topic}`: Pulsar's REST produce. */
export function producePath(topic: DataTopic): string {
  return `/topics/${topic.pathSegments}`;
}

/** `GET /topics/{domain}/{tenant}/{namespace}/{topic}/producers/{producerName}/lastSequenceId`. */
export function lastSequenceIdPath(topic: DataTopic, producerName: string): string {
  const segment = asClientArgument(() => pathSegment(producerName, 'producerName'));
  return `/topics/${topic.pathSegments}/producers/${segment}/lastSequenceId`;
}

/** `POST /consumers/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}`: subscribe. */
export function subscribePath(topic: DataTopic, subscription: string): string {
  const segment = asClientArgument(() => pathSegment(subscription, 'subscription'));
  return `/consumers/${topic.pathSegments}/subscription/${segment}`;
}

/** `/consumers/{consumerId}[/{action}]`. */
export function consumerPath(consumerId: string, action?: string): string {
  return `/consumers/${encodeURIComponent(consumerId)}${action ? `/${action}` : ''}`;
}

/** Runs a check of the admin helpers, reporting its refusal as the SDK's argument error. */
function asClientArgument<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof AcklineAdminArgumentError) {
      throw new AcklineClientArgumentError(error.reason, { cause: error });
    }
    throw error;
  }
}
