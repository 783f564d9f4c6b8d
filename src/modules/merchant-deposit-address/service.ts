import type { Selectable, Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import type { DepositAddressesTable } from './tables.js';
import type { ServiceContext } from '../../service-context.js';
import type { IdempotencyContext } from '../../platform/http/request-context.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { sha256Hex } from '../../platform/ids.js';
import { keysetPage } from '../../db/keyset-page.js';
import { addressById, addressesQuery, insertAddress } from './queries.js';
import { getAsset, usableNetwork } from '../assets/index.js';
import { withDeadline } from '../../upstreams/deadline.js';
import { providerStatusOf } from '../../upstreams/port.js';
import { raiseAlertOnce } from '../alerts/index.js';

/** The codes each function can answer (beyond invalid input): the routes declare these lists. */
export const depositAddressErrors = {
  request: ['asset_not_allowed', 'service_unavailable'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export function depositAddressView(row: Selectable<DepositAddressesTable>) {
  return {
    id: row.id,
    asset: row.asset,
    network: row.network,
    address: row.address,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** `dad_<uuid>` derived from (merchant, environment, idempotency key): the chain provider's request id. */
export function depositAddressIdFor(merchantId: string, environment: string, key: string): string {
  const h = sha256Hex(`deposit-address|${merchantId}|${environment}|${key}`);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `dad_${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface ChainAddress {
  id: string;
  asset: string;
  network: string;
  address: string;
}

/**
 * Checks the asset and network, then asks the chain upstream for an address (outside any
 * transaction; the provider is idempotent by our request id, so a retry with the same key gets the
 * same address). Anything but an issued address (accepted, `succeeded`) is 400 `service_unavailable`
 * with `retry_after`. No answer (timeout, 5xx) or an acceptance with another status (outside our
 * enumeration: also an operator alert): not kept as the key's result, so the same key is retried (the provider
 * sees the same request id and issues at most one address). A refusal: kept, as every 4xx, since
 * the provider would only repeat its refusal to the same request id; a retry takes a new key.
 */
export async function requestAddress(
  ctx: ServiceContext,
  merchantId: string,
  environment: 'sandbox' | 'production',
  idem: IdempotencyContext,
  input: { asset: string; network: string },
): Promise<ChainAddress> {
  const asset = await getAsset(ctx.db, input.asset.trim().toUpperCase());
  const network = usableNetwork(asset, input.network.trim().toUpperCase());
  if (!asset || !network) throw new ApiError('asset_not_allowed', 'The asset has no enabled channel on this network.');
  const id = depositAddressIdFor(merchantId, environment, idem.key);
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.chain.createDepositAddress(
      { merchantId, environment },
      { requestId: id, asset: asset.code, network: network.network },
    ),
  );
  // Only an address the provider says is issued (`succeeded`) is stored and answered. An acceptance
  // with any other status is no address: answered as no answer (the same key retries); a status
  // outside our enumeration (sandbox `unknown_status`) also raises one operator alert per request.
  if (answer.kind === 'accepted' && answer.status !== 'succeeded' && providerStatusOf(answer.status) === undefined) {
    await raiseAlertOnce(ctx.db, {
      kind: 'upstream.unknown_status',
      merchantId,
      environment,
      object: 'deposit_address',
      objectId: id,
      message:
        `Deposit address ${id} (${asset.code} on ${network.network}): the chain provider answered with a ` +
        `status outside our enumeration (${answer.status}); no address was stored or answered.`,
    });
  }
  if (answer.kind !== 'accepted' || answer.status !== 'succeeded') {
    const refused = answer.kind === 'rejected';
    if (!refused) idem.noStore = true;
    throw new ApiError(
      'service_unavailable',
      `Deposit addresses for this asset and network are temporarily unavailable; retry after retry_after ` +
        `seconds${refused ? ' with a new idempotency key' : ' with the same idempotency key'}.`,
      {
        retry_after: ctx.config.depositAddressRetryAfterSeconds,
      },
    );
  }
  return { id, asset: asset.code, network: network.network, address: answer.detail.address };
}

/** Stores the issued address (in executeWrite's transaction); a repeat of the id answers the stored row. */
export async function storeAddress(
  trx: Transaction<Database>,
  merchantId: string,
  environment: 'sandbox' | 'production',
  a: ChainAddress,
) {
  await insertAddress(trx, merchantId, environment, a);
  const row = await addressById(trx, a.id);
  return depositAddressView(row);
}

export async function listDepositAddresses(
  db: Db,
  merchantId: string,
  environment: 'sandbox' | 'production',
  query: { limit?: number; cursor?: string; asset?: string; network?: string },
) {
  const q = addressesQuery(db, merchantId, environment, query.asset?.toUpperCase(), query.network?.toUpperCase());
  return keysetPage(q, query, depositAddressView);
}
