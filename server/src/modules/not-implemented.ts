/**
 * Operations of the contract whose issue has not landed yet answer 501 `not_implemented` in the envelope — never
 * fake data. Each entry here is removed when its module implements it.
 */
import { ApiError } from '../http/errors.js';
import type { Handler, OperationId } from '../http/handler.js';

const placeholders = new WeakSet<object>();

export function notImplemented<Id extends OperationId>(operationId: Id): Handler<Id> {
  const handler: Handler<Id> = async () => {
    throw new ApiError(501, 'not_implemented', `${operationId} is part of the v1 contract but is not available on this server yet.`);
  };
  placeholders.add(handler);
  return handler;
}

/** Whether `handler` is a placeholder: the contract test requires exactly these operations to declare 501. */
export function isNotImplemented(handler: unknown): boolean {
  return typeof handler === 'function' && placeholders.has(handler);
}
