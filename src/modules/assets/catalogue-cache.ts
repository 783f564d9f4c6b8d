import type { Kysely } from 'kysely';
import type { Asset } from './rules.js';
import { NotifiedCache } from '../../platform/auth/notified-cache.js';

/** The channel migration 027's triggers notify on every change of `assets` or `asset_networks`. */
export const assetChangeChannel = 'mwa_asset';

/** How long after this process changed the catalogue its cache answers nothing (as for members: member-cache.ts). */
export const ownAssetWriteBypassMs = 10_000;

/**
 * The asset catalogue held per process (docs/performance.md, "Request pipeline and the authenticated read"): `getAsset`
 * is read by every money write (1-2 round trips). Trusted only while the process listens to
 * `mwa_asset`: every insert, update or delete of `assets` or `asset_networks` notifies (migration
 * 027) and every process forgets the whole catalogue, so an asset or network the operator
 * disables is refused by every process as soon as the notification arrives, as for keys. The
 * process that changes the catalogue answers nothing for `ownAssetWriteBypassMs` from the change
 * (its commit and its notification's way back). A read that began before a notification is never
 * stored; unknown codes are not held.
 */
export class AssetCatalogueCache extends NotifiedCache<Asset> {
  constructor(nowMs: () => number = Date.now) {
    // The catalogue is small: the bound only guards against a flood of unknown codes (not held anyway).
    super(10_000, nowMs, ownAssetWriteBypassMs);
  }
}

/*
 * The cache of a database handle, found from the handle or any transaction or plugin-extended
 * handle made from it: they share the dialect adapter of the `Kysely` instance they come from,
 * so a service's cache is never another service's (tests run several in one process).
 */
const caches = new WeakMap<object, AssetCatalogueCache>();
const keyOf = (db: Kysely<any>): object => db.getExecutor().adapter;

/** The composition root gives the service's handle its cache. */
export function useAssetCache(db: Kysely<any>, cache: AssetCatalogueCache): void {
  caches.set(keyOf(db), cache);
}

export function assetCacheOf(db: Kysely<any>): AssetCatalogueCache | undefined {
  return caches.get(keyOf(db));
}
