/**
 * Events: the record of what happened, written in the transaction of the change it describes, and the
 * source of webhook deliveries.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { eventsJobs } from './jobs.js';
export { deliveryWakeChannel, queueDeliveries, recordEvent, wakeDispatchers, type NewEvent } from './record.js';
export type { EventType } from './tables.js';
// What a retention run removes of the event log (retention module).
export { countEventsBefore, deleteEventsBefore } from './repository.js';
