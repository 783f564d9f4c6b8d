/**
 * The sandbox area's one public file: the routes, and the clock and reset
 * functions the merchant console's settings pages call. Another area imports this file and
 * nothing else of `sandbox/` (`npm run lint:deps`).
 */
export { sandboxRoutes } from './routes.js';
export { advanceClock, advanceSecondsMax, presetBehavior, readClock, resetSandbox } from './service.js';
