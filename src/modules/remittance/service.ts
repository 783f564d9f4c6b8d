/**
 * The remittance area's surface for other modules (the dependency rules let them reach only an
 * area's service, queries, rules, state and tables): the order reads, as the API's routes use them.
 */
export { getOrder, listOrders } from './orders.js';
