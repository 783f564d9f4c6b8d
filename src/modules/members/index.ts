/**
 * The members area's one public file: the routes the composition root registers, the member
 * look-up by either id (the request pipeline's on-behalf-of step, injected by the server as
 * ctx.resolveMember; other areas and the merchant console resolve a member with it), the member
 * row's lock (cards/controls/queries.ts still locks it itself and may use this one) and the
 * external id other areas' events carry.
 */
export { memberRoutes } from './routes.js';
export { externalMemberIdOf, lockMember, resolveMember } from './queries.js';
