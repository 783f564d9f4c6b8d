/**
 * The members area's one public file: the routes the composition root registers, and the member
 * look-up by either id (the request pipeline's on-behalf-of step, injected by the server as
 * ctx.resolveMember; other areas and the merchant console resolve a member with it).
 */
export { memberRoutes } from './routes.js';
export { resolveMember } from './queries.js';
