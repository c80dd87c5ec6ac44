import type { FunctionInvoker } from '../../ports/function-invoker.ts';
import { FunctionInvocationError } from '../../ports/function-invoker.ts';

/**
 * A function handler called in this process, as Lambda would invoke it: the payload and the
 * answer cross as JSON, and a handler that throws is an invocation that failed. The embedded
 * stack's stand-in for `LambdaFunctionInvoker`: a local event-driven consumer's runner calls
 * the user's handler through it. It cannot stop a handler that runs past a timeout.
 */
export class InProcessFunctionInvoker implements FunctionInvoker {
  readonly #handler: (event: never) => unknown;

  constructor(handler: (event: never) => unknown) {
    this.#handler = handler;
  }

  async invoke(payload: unknown): Promise<unknown> {
    let answer: unknown;
    try {
      answer = await this.#handler(JSON.parse(JSON.stringify(payload)) as never);
    } catch (error) {
      throw new FunctionInvocationError(`the handler failed: ${String(error)}`, { cause: error });
    }
    return answer === undefined ? null : JSON.parse(JSON.stringify(answer));
  }
}
