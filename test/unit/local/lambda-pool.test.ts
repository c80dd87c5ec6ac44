// The embedded stack's API functions run as Lambda runs them (issue 22, criterion 7): one request
// at a time per container, a new container when every one is busy, idle ones reused and, past a
// bound, dropped.
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { lambdaPool } from '../../../infra/local/lambda-pool.ts';

const event = {} as APIGatewayProxyEvent;
const context = {} as Context;

/** A function whose containers answer their own number once `release` is called. */
function containers() {
  const waiting: (() => void)[] = [];
  let built = 0;
  const start = () => {
    const id = ++built;
    return async (): Promise<APIGatewayProxyResult> => {
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { statusCode: 200, body: String(id) };
    };
  };
  const releaseAll = () => {
    for (const resolve of waiting.splice(0)) resolve();
  };
  return { start, releaseAll, built: () => built };
}

describe('lambdaPool', () => {
  it('gives each concurrent request a container of its own, and reuses idle ones', async () => {
    const fn = containers();
    const pool = lambdaPool(fn.start);

    const held = Array.from({ length: 300 }, () => pool(event, context));
    await Promise.resolve();
    expect(pool.containers()).toBe(300);
    fn.releaseAll();
    const answers = await Promise.all(held);
    expect(new Set(answers.map((answer) => (answer as APIGatewayProxyResult).body)).size).toBe(300);

    const next = pool(event, context);
    await Promise.resolve();
    fn.releaseAll();
    await next;
    expect(pool.containers()).toBe(300);
  });

  it('keeps at most maxIdle idle containers after a burst', async () => {
    const fn = containers();
    const pool = lambdaPool(fn.start, 4);

    const held = Array.from({ length: 10 }, () => pool(event, context));
    await Promise.resolve();
    fn.releaseAll();
    await Promise.all(held);

    expect(pool.idle()).toBe(4);
    const again = Array.from({ length: 6 }, () => pool(event, context));
    await Promise.resolve();
    fn.releaseAll();
    await Promise.all(again);
    expect(pool.containers()).toBe(12);
  });
});
