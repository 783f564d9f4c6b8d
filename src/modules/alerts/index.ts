/**
 * The alerts area's one public file: the operator routes, and the raising of an
 * alert other areas (and the server's job runner) report through. Another area imports this file
 * and nothing else of `alerts/` (`npm run lint:deps`).
 */
export { alertOperatorRoutes } from './operator-routes.js';
export { raiseAlert, raiseAlertOnce } from './queries.js';
