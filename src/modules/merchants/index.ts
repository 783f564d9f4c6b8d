/**
 * The merchants area's one public file: the operator routes, the merchant
 * read other areas scope their work with, and the API-key lifecycle the bootstrap and the
 * merchant console's key pages use. Another area imports this file and nothing else of
 * `merchants/` (`npm run lint:deps`).
 */
export { merchantOperatorRoutes } from './operator-routes.js';
export { anyMerchant, createMerchant, getMerchant, lockDemoMerchantBootstrap } from './queries.js';
export { splitScopes } from './rules.js';
export { createKey, getKey, rotateKey, updateKey, type KeyWithSecrets } from './service.js';
