/**
 * The webhooks area's one public file (docs/webhooks.md): the routes and background work the
 * composition roots register, the delivery pools the server closes, and the endpoint and delivery
 * functions the merchant console's pages call. Another area imports this file and nothing else of
 * `webhooks/` (`npm run lint:deps`).
 */
export { webhookRoutes } from './routes.js';
export { webhookOperatorRoutes } from './operator-routes.js';
export { webhookBatchQueues, webhookJobHandlers, webhookTickers, webhookTimedProcesses } from './workers.js';
export { closeDeliveryPools } from './http-post.js';
export { redeliverAction } from './state.js';
export {
  checkEndpointUrl,
  createEndpoint,
  deleteEndpoint,
  deliveryStatuses,
  deliveryView,
  listDeliveries,
  listEndpoints,
  overlapSecondsDefault,
  redeliver,
  replayEndpoint,
  replayEventsMax,
  rollSecret,
  updateEndpoint,
} from './service.js';
