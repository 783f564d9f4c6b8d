/** The asset catalogue. */
import type { Asset, ListEnvelope } from '../types.js';
import { data, type ResourceHost } from './shared.js';

export interface AssetsResource {
  /** GET /v1/assets: the `data` array. */
  list(): Promise<Asset[]>;
}

export function createAssetsResource(host: ResourceHost): AssetsResource {
  return {
    list: () => data(host.request<ListEnvelope<Asset>>({ method: 'GET', path: '/v1/assets' })),
  };
}
