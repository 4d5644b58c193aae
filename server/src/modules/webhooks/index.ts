/**
 * Webhooks: subscriptions, signed deliveries with retries, and the dispatcher that sends them.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { WebhookDispatcher } from './dispatcher.js';
// What a retention run removes of the delivery history (retention module).
export { countFinishedDeliveriesBefore, deleteFinishedDeliveriesBefore } from './repository.js';
