/**
 * The assets area's one public file: the routes and operator routes the composition roots
 * register, the catalogue cache the server starts, and what every money area reads of an asset
 * (its scale, its networks, its address check). Another area imports this file and nothing else of
 * `assets/` (`npm run lint:deps`).
 */
export { assetRoutes } from './routes.js';
export { assetOperatorRoutes } from './operator-routes.js';
export { AssetCatalogueCache, assetChangeChannel, useAssetCache } from './catalogue-cache.js';
export { assetScale, getAsset, listAssets, pageAtScale } from './queries.js';
export { addressMatches, usableNetwork, type Asset, type AssetNetwork } from './rules.js';
