/**
 * The events area's one public file (docs/events.md): the event routes, the retention and stream
 * work the background runner registers, and the event reads the merchant console shows. Another
 * area imports this file and nothing else of `modules/events/` (`npm run lint:deps`).
 */
export { eventRoutes } from './routes.js';
export { eventTickers, eventTimedProcesses } from './workers.js';
export { findEvent, listEvents, type EventObject } from './queries.js';
