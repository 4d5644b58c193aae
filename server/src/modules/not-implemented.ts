/**
 * Operations of the contract whose issue has not landed yet answer 501 `not_implemented` in the envelope — never
 * fake data. Each entry here is removed when its module implements it.
 */
import { ApiError } from '../http/errors.js';
import type { Handler, OperationId } from '../http/handler.js';

export function notImplemented<Id extends OperationId>(operationId: Id): Handler<Id> {
  return async () => {
    throw new ApiError(501, 'not_implemented', `${operationId} is part of the v1 contract but is not available on this server yet.`);
  };
}
