/**
 * Webhooks: subscriptions, signed deliveries with retries, and the dispatcher that sends them.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { WebhookDispatcher } from './dispatcher.js';
