import type { Db, Environment } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import { type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';

/** Reads of other areas' tables the console shows (the writes go through their areas' services). */

export async function listKeys(db: Db, merchantId: string, environment: Environment) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where(inScope({ merchantId, environment }))
    .orderBy('created_at', 'desc')
    .limit(200)
    .execute();
}

export async function listMembers(db: Db, merchantId: string, environment: Environment, page: PageParams) {
  const q = db.selectFrom('members').selectAll().where(inScope({ merchantId, environment }));
  return keysetPage(q, page);
}

/** An object's events, oldest first: its state history as the webhooks told it. */
export async function objectEvents(db: Db, merchantId: string, environment: Environment, objectId: string) {
  return db
    .selectFrom('events')
    .select(['id', 'type', 'status', 'status_version', 'created_at'])
    .where(inScope({ merchantId, environment }))
    .where('object_id', '=', objectId)
    .orderBy('seq')
    .limit(200)
    .execute();
}

/** The ledger entries posted for an object, with their postings and each account's owner and bucket. */
export async function objectEntries(db: Db, merchantId: string, environment: Environment, referenceId: string) {
  return db
    .selectFrom('journal_entries as e')
    .innerJoin('postings as p', 'p.entry_id', 'e.id')
    .innerJoin('ledger_accounts as a', 'a.id', 'p.account_id')
    .innerJoin('assets as s', 's.code', 'p.asset')
    .select([
      'e.id as entry_id',
      'e.kind',
      'e.created_at',
      'p.id as posting_id',
      'p.amount',
      'p.asset',
      's.scale',
      'a.owner_type',
      'a.owner_id',
      'a.bucket',
    ])
    .where('e.merchant_id', '=', merchantId)
    .where('e.environment', '=', environment)
    .where('e.reference_id', '=', referenceId)
    .orderBy('e.seq')
    .orderBy('p.id')
    .limit(500)
    .execute();
}

/** The merchant's cards of every member (the cards area lists one member's at a time). */
export async function listMerchantCards(db: Db, merchantId: string, environment: Environment, page: PageParams) {
  const q = db
    .selectFrom('cards')
    .select(['seq', 'id', 'member_id', 'form_factor', 'currency', 'status', 'last4', 'created_at'])
    .where(inScope({ merchantId, environment }));
  return keysetPage(q, page);
}

/** The merchant's card applications, newest first (the sandbox helpers decide pending ones). */
export async function listMerchantApplications(db: Db, merchantId: string, environment: Environment, limit: number) {
  return db
    .selectFrom('card_applications')
    .select(['id', 'member_id', 'status', 'created_at'])
    .where(inScope({ merchantId, environment }))
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

/** The merchant's stored branding values, as typed (readBranding answers them resolved). */
export async function storedBranding(db: Db, merchantId: string) {
  return db
    .selectFrom('merchant_branding')
    .select(['display_name', 'accent_color'])
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** The sandbox's upstream presets still in force at the sandbox clock's `now`. */
export async function presetsInForce(db: Db, merchantId: string, now: Date) {
  return db
    .selectFrom('upstream_behaviors')
    .select(['upstream', 'behavior', 'expires_at'])
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', 'sandbox')
    .where('expires_at', '>', now)
    .orderBy('upstream')
    .execute();
}
