/**
 * A card opened (docs/cards.md, "States"): for an approved application, or in place of a card
 * being replaced. Physical cards wait for activation, virtual ones are active at once.
 */
import { newId } from '../../../platform/ids.js';
import type { Environment } from '../../../db/columns.js';
import type { IssuedCard } from '../../../upstreams/card/port.js';
import type { Db } from '../shared/queries.js';
import type { Address, FormFactor } from '../shared/tables.js';
import { insertCard } from './queries.js';
import { openingInventory, openingStatus } from './state.js';
import type { CardRow } from './tables.js';

export interface CardOpening {
  merchantId: string;
  environment: Environment;
  memberId: string;
  applicationId: string;
  productSeq: string;
  formFactor: FormFactor;
  currency: string;
  /** What the issuer made. */
  issued: IssuedCard;
  billingAddress: Address | null;
  /** The card this one replaces. */
  replaces?: string;
}

/** Inserts the new card (`crd_…`, version 1) at `now`, the merchant's time. */
export function openCard(trx: Db, o: CardOpening, now: Date): Promise<CardRow> {
  return insertCard(trx, {
    id: newId('crd'),
    merchant_id: o.merchantId,
    environment: o.environment,
    member_id: o.memberId,
    application_id: o.applicationId,
    product_seq: o.productSeq,
    form_factor: o.formFactor,
    currency: o.currency,
    status: openingStatus(o.formFactor),
    status_version: 1,
    upstream_ref: o.issued.cardRef,
    last4: o.issued.last4,
    exp_month: o.issued.expMonth,
    exp_year: o.issued.expYear,
    billing_address: o.billingAddress ? JSON.stringify(o.billingAddress) : null,
    inventory_status: openingInventory(o.formFactor),
    locked_until: null,
    activated_at: o.formFactor === 'virtual' ? now : null,
    created_at: now,
    updated_at: now,
    ...(o.replaces === undefined ? {} : { replaces: o.replaces }),
  });
}
