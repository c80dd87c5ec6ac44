import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { invocationRefusals } from '../../infra/api-routes.ts';
import { type LocalGateway, startLocalGateway } from '../../infra/local/local-gateway.ts';
import { LAMBDA_PAYLOAD_LIMIT_BYTES, proxyResultBytes } from '../../shared/http/lambda-payload.ts';
import { sendRaw } from '../support/raw-http.ts';

// Issue 22, criterion 1: Lambda's 6 MB synchronous payload limit on the local gateway, both ways,
// as API Gateway meets it with a Lambda proxy integration: a proxy event over 6,291,456 bytes is
// refused with 413 before the function runs; an answer over it is lost (502) after the function
// ran. Handlers here are fakes: the gateway alone is under test.

const allow = (event: APIGatewayRequestAuthorizerEvent) => ({
  principalId: 'alice',
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow' as const, Resource: event.methodArn }],
  },
});

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/** A gateway whose functions record the events they get and answer with `answer(event)`. */
async function start(answer: (event: APIGatewayProxyEvent) => APIGatewayProxyResult) {
  const events: APIGatewayProxyEvent[] = [];
  const handler = async (event: APIGatewayProxyEvent) => {
    events.push(event);
    return answer(event);
  };
  gateway = await startLocalGateway({
    port: 0,
    host: '127.0.0.1',
    functions: {
      authorizer: async (event) => allow(event),
      api: { 'admin-api': handler, 'data-api': handler },
    },
  });
  const url = gateway.url;
  const post = (body: string) =>
    sendRaw(
      url,
      {
        method: 'POST',
        target: '/topics/persistent/public/default/big',
        headers: [
          ['Authorization', 'Bearer alice'],
          ['Content-Type', 'application/json'],
        ],
        body,
      },
      60_000,
    );
  return { events, post };
}

const eventBytes = (event: APIGatewayProxyEvent) => Buffer.byteLength(JSON.stringify(event));
const ok = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };

describe("the local gateway enforces Lambda's 6 MB payload limit", () => {
  it('passes a request whose proxy event is within the limit to the function', async () => {
    const { events, post } = await start(() => ok);

    const response = await post(JSON.stringify({ payload: 'x'.repeat(6_000_000) }));

    expect(response.status).toBe(200);
    expect(events).toHaveLength(1);
    expect(eventBytes(events[0] as APIGatewayProxyEvent)).toBeLessThanOrEqual(LAMBDA_PAYLOAD_LIMIT_BYTES);
  });

  it.each([
    [
      'a body of exactly 6,291,456 bytes (the event adds its envelope)',
      'x'.repeat(LAMBDA_PAYLOAD_LIMIT_BYTES),
    ],
    // Each quote is escaped in the event's body string, which doubles it.
    ['a 3.2 MB body of quotes (6.4 MB once escaped in the event)', '"'.repeat(3_200_000)],
  ])('refuses %s with 413 and a JSON reason, without invoking the function', async (_, body) => {
    const { events, post } = await start(() => ok);

    const response = await post(body);

    expect(response.status).toBe(413);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.text)).toEqual({ reason: invocationRefusals.requestTooLarge.reason });
    expect(events).toHaveLength(0);
  });

  it('passes an answer of exactly 6,291,456 bytes, and answers 502 for one byte more', async () => {
    const envelope = proxyResultBytes({ statusCode: 200, body: '' });
    const answer = (bytes: number): APIGatewayProxyResult => ({
      statusCode: 200,
      body: 'x'.repeat(bytes - envelope),
    });
    const { events, post } = await start((event) =>
      answer(LAMBDA_PAYLOAD_LIMIT_BYTES + (event.body === '"over"' ? 1 : 0)),
    );

    const within = await post('"within"');
    const over = await post('"over"');

    expect(proxyResultBytes(answer(LAMBDA_PAYLOAD_LIMIT_BYTES))).toBe(LAMBDA_PAYLOAD_LIMIT_BYTES);
    expect(within.status).toBe(200);
    expect(within.text).toHaveLength(LAMBDA_PAYLOAD_LIMIT_BYTES - envelope);
    expect(over.status).toBe(502);
    expect(JSON.parse(over.text)).toEqual({ reason: invocationRefusals.responseTooLarge.reason });
    expect(events).toHaveLength(2); // the function ran: its answer is what was lost
  });

  it('counts an answer as Lambda does: the serialized proxy result, escaping included', async () => {
    // 3.2 MB of body text, 6.4 MB once the quotes are escaped in the proxy result.
    const { post } = await start(() => ({ statusCode: 200, body: '"'.repeat(3_200_000) }));

    const response = await post('{}');

    expect(response.status).toBe(502);
  });
});
