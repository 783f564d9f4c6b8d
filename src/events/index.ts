/**
 * Events (issue 38): the catalogue of event types (what a merchant can receive), the outbox a
 * write records its events in, in its own transaction (docs/events.md), and the catalogue's part of
 * the OpenAPI document (its webhooks).
 */
export {
  recordEvent,
  rowEnvelope,
  recordEvents,
  eventRow,
  eventBody,
  type EventInput,
  type EventSubject,
  type StoredEvent,
} from './outbox.js';
export { eventCatalogue, eventTypes, isEventType, type EventType } from './catalogue.js';
export { webhooksDocument } from './openapi.js';
