/**
 * The `ackline` package: the client SDK (`AcklineClient`: producers and consumers), the admin client
 * (`AcklineAdmin`), and the domain classes they take (`MultiplierRedeliveryBackoff`,
 * `FixedRedeliveryBackoff`, `MessageId`).
 *
 * @example
 * import { AcklineClient, MultiplierRedeliveryBackoff } from 'ackline';
 *
 * const client = AcklineClient.builder().serviceUrl('http://127.0.0.1:8080').authToken(token).build();
 */
export * from './client/index.ts';
