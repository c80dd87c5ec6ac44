import { AcklineError } from '../domain/errors.ts';

/**
 * A function invocation that did not answer: the function threw, timed out or crashed, or the
 * invocation was refused. Not in a family: it never answers an HTTP request.
 */
export class FunctionInvocationError extends AcklineError {}
/**
 * Invokes a function synchronously (Lambda's `RequestResponse`): the consumer runner hands the
 * user's function a batch through it.
 */
export interface FunctionInvoker {
  /**
   * Invokes the function with `payload` (JSON) and resolves its answer (parsed JSON).
   * @throws FunctionInvocationError when the invocation did not answer: the function threw, timed
   * out or crashed, or the invocation was refused (throttled, too large, not permitted).
   */
  invoke(payload: unknown): Promise<unknown>;
}
