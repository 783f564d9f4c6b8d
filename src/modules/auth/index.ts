/**
 * The auth area's one public file (docs/authentication.md): the token routes the composition root
 * registers. Another area imports this file and nothing else of `auth/` (`npm run lint:deps`).
 */
export { authRoutes } from './routes.js';
