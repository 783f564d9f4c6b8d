/** Reads of the members table. The lookup by either id is the request pipeline's too, so it lives in the platform. */
export { resolveMember } from '../../platform/on-behalf-of.js';
