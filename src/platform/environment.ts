import type { Environment } from '../db/schema.js';

/** The environment is decided by the host called, never by a header of our own. */
export function environmentFromHost(host: string | undefined): Environment {
  const h = (host ?? '').toLowerCase();
  return h.includes('api-sandbox') || h.includes('sandbox.') ? 'sandbox' : 'production';
}
