import { sql, type Kysely } from 'kysely';

/**
 * A hex (EVM) withdrawal address is checked against the blacklist and the service's own deposit
 * addresses without letter case (`lower(address)`, src/modules/withdrawals/queries.ts): these
 * indexes keep that check a look-up, where the (network, address) keys cannot serve it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX blacklisted_addresses_lower ON blacklisted_addresses (network, lower(address))`.execute(db);
  await sql`CREATE INDEX deposit_addresses_lower ON deposit_addresses (network, lower(address))`.execute(db);
}
