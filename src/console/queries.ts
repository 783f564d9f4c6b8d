import type { Selectable } from 'kysely';
import type { Database, Environment, Db } from '../db/schema.js';
import { newId } from '../platform/ids.js';
import { keysetPage, type PageParams } from '../platform/pagination.js';
import type { ConsoleAuditTable, ConsoleRole, ConsoleUsersTable } from './tables.js';

/** Reads and writes of the console's own tables. */

export type { Db } from '../db/schema.js';
export type ConsoleUserRow = Selectable<ConsoleUsersTable>;

export async function findUserByEmail(db: Db, email: string): Promise<ConsoleUserRow | undefined> {
  return db.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findUser(db: Db, id: string): Promise<ConsoleUserRow | undefined> {
  return db.selectFrom('console_users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByInvite(db: Db, tokenHash: string): Promise<ConsoleUserRow | undefined> {
  return db
    .selectFrom('console_users')
    .selectAll()
    .where('invite_token_hash', '=', tokenHash)
    .forUpdate()
    .executeTakeFirst();
}

export async function listUsers(db: Db, merchantId: string): Promise<ConsoleUserRow[]> {
  return db
    .selectFrom('console_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .limit(500)
    .execute();
}

export async function insertUser(
  db: Db,
  values: {
    merchantId: string;
    email: string;
    role: ConsoleRole;
    status: 'invited' | 'active';
    passwordHash: string | null;
    inviteTokenHash: string | null;
    inviteExpiresAt: Date | null;
    now: Date;
  },
): Promise<ConsoleUserRow> {
  return db
    .insertInto('console_users')
    .values({
      id: newId('cus'),
      merchant_id: values.merchantId,
      email: values.email,
      role: values.role,
      status: values.status,
      password_hash: values.passwordHash,
      invite_token_hash: values.inviteTokenHash,
      invite_expires_at: values.inviteExpiresAt,
      created_at: values.now,
      updated_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateUser(
  db: Db,
  id: string,
  set: Partial<{
    role: ConsoleRole;
    status: 'invited' | 'active' | 'disabled';
    password_hash: string | null;
    invite_token_hash: string | null;
    invite_expires_at: Date | null;
    updated_at: Date;
  }>,
): Promise<ConsoleUserRow> {
  return db.updateTable('console_users').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

// Sessions ------------------------------------------------------------------------------------

export async function insertSession(db: Db, tokenHash: string, userId: string, now: Date): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({ token_hash: tokenHash, user_id: userId, created_at: now, last_seen_at: now })
    .execute();
}

export async function findSession(db: Db, tokenHash: string) {
  return db
    .selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.id', 's.user_id')
    .innerJoin('merchants as m', 'm.id', 'u.merchant_id')
    .select([
      's.token_hash',
      's.created_at',
      's.last_seen_at',
      'u.id as user_id',
      'u.email',
      'u.role',
      'u.status',
      'u.merchant_id',
      'm.name as merchant_name',
    ])
    .where('s.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function touchSession(db: Db, tokenHash: string, now: Date): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: now }).where('token_hash', '=', tokenHash).execute();
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).execute();
}

export async function deleteUserSessions(db: Db, userId: string): Promise<number> {
  const r = await db.deleteFrom('console_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Ends every session of the user but one (a password change keeps the browser that made it). */
export async function deleteOtherSessions(db: Db, userId: string, keepTokenHash: string): Promise<number> {
  const r = await db
    .deleteFrom('console_sessions')
    .where('user_id', '=', userId)
    .where('token_hash', '<>', keepTokenHash)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

// Recovery codes ------------------------------------------------------------------------------

/** Replaces the user's set: the old codes stop working in the same transaction. */
export async function replaceRecoveryCodes(
  db: Db,
  userId: string,
  hashes: readonly string[],
  now: Date,
): Promise<void> {
  await deleteRecoveryCodes(db, userId);
  if (hashes.length)
    await db
      .insertInto('console_recovery_codes')
      .values(hashes.map((h) => ({ user_id: userId, code_hash: h, created_at: now })))
      .execute();
}

export async function deleteRecoveryCodes(db: Db, userId: string): Promise<number> {
  const r = await db.deleteFrom('console_recovery_codes').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Spends one unused code: a conditional update, so of two uses of one code only one wins. */
export async function spendRecoveryCode(db: Db, userId: string, codeHash: string, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('console_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function unusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const r = await db
    .selectFrom('console_recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

// Sign-in failures ----------------------------------------------------------------------------

/** Who an attempt comes from: the client address, and the device id when the browser is known to the account. */
export interface AttemptSource {
  email: string;
  ip: string;
  device: string | undefined;
}

const countOf = (n: { n: string | number | bigint }) => Number(n.n);

/**
 * The failures the throttle weighs (rules.ts#loginAllowed), other than the attempt's own row: a
 * known browser's own, or else the client address's (last 15 minutes) and the account's from
 * unknown browsers (last 24 hours, with the latest).
 */
export async function countFailures(
  db: Db,
  source: AttemptSource,
  since: { client: Date; account: Date },
  exceptId: string,
) {
  const failures = db.selectFrom('console_login_failures').where('id', '!=', exceptId as never);
  if (source.device !== undefined) {
    const d = await failures
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('device_hash', '=', source.device)
      .where('email', '=', source.email)
      .where('failed_at', '>', since.client)
      .executeTakeFirstOrThrow();
    return { kind: 'device' as const, device: countOf(d) };
  }
  const [ip, account] = await Promise.all([
    failures
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('client_ip', '=', source.ip)
      .where('device_hash', 'is', null)
      .where('failed_at', '>', since.client)
      .executeTakeFirstOrThrow(),
    failures
      .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('failed_at').as('last')])
      .where('email', '=', source.email)
      .where('device_hash', 'is', null)
      .where('failed_at', '>', since.account)
      .executeTakeFirstOrThrow(),
  ]);
  return {
    kind: 'unknown' as const,
    byIp: countOf(ip),
    byAccount: countOf(account),
    lastAccountFailure: account.last === null ? undefined : new Date(account.last as string | Date),
  };
}

/**
 * Records an attempt as a failure before it is checked (it stays one unless `releaseAttempt`
 * takes it back), and drops this address's and this e-mail's rows older than `keepSince` (the
 * table stays small). Answers the row's id.
 */
export async function reserveAttempt(db: Db, source: AttemptSource, now: Date, keepSince: Date): Promise<string> {
  await db
    .deleteFrom('console_login_failures')
    .where('failed_at', '<=', keepSince)
    .where((eb) => eb.or([eb('email', '=', source.email), eb('client_ip', '=', source.ip)]))
    .execute();
  const row = await db
    .insertInto('console_login_failures')
    .values({ email: source.email, client_ip: source.ip, device_hash: source.device ?? null, failed_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(row.id);
}

/** An attempt that turned out right, or was never checked (throttled): no failure. */
export async function releaseAttempt(db: Db, id: string): Promise<void> {
  await db
    .deleteFrom('console_login_failures')
    .where('id', '=', id as never)
    .execute();
}

/**
 * After a complete sign-in: the failures of the same browser (its device), or of the same client
 * address on this account. Not the account's other failures: a guesser elsewhere keeps its count
 * when the person signs in.
 */
export async function clearFailures(db: Db, source: AttemptSource): Promise<void> {
  await db
    .deleteFrom('console_login_failures')
    .where('email', '=', source.email)
    .where((eb) =>
      source.device !== undefined
        ? eb('device_hash', '=', source.device)
        : eb.and([eb('device_hash', 'is', null), eb('client_ip', '=', source.ip)]),
    )
    .execute();
}

// Audit ---------------------------------------------------------------------------------------

export interface AuditInput {
  merchantId: string;
  environment: Environment;
  userId: string;
  userEmail: string;
  action: string;
  objectId?: string;
  detail?: string;
  now: Date;
}

export async function insertAudit(db: Db, a: AuditInput): Promise<void> {
  await db
    .insertInto('console_audit')
    .values({
      id: newId('aud'),
      merchant_id: a.merchantId,
      environment: a.environment,
      user_id: a.userId,
      user_email: a.userEmail,
      action: a.action,
      object_id: a.objectId ?? '',
      detail: (a.detail ?? '').slice(0, 2000),
      created_at: a.now,
    })
    .execute();
}

export async function auditPage(db: Db, merchantId: string, environment: Environment, page: PageParams) {
  const q = db
    .selectFrom('console_audit')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment);
  return keysetPage(q, page, (r: Selectable<ConsoleAuditTable>) => r);
}

// Reads of other tables the console shows (the writes go through their areas' services) ------

export async function listKeys(db: Db, merchantId: string, environment: Environment) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment)
    .orderBy('created_at', 'desc')
    .limit(200)
    .execute();
}

/** The newest API calls, at most `limit`, before the id `before` when given (the log's own bigserial). */
export async function apiCalls(db: Db, merchantId: string, environment: Environment, limit: number, before?: bigint) {
  let q = db
    .selectFrom('api_call_logs')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment);
  if (before !== undefined) q = q.where('id', '<', before.toString() as unknown as bigint);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

export async function deliveryAttempts(db: Db, deliveryIds: readonly string[]) {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('id')
    .limit(2000)
    .execute();
}

export async function listMembers(db: Db, merchantId: string, environment: Environment, page: PageParams) {
  const q = db
    .selectFrom('members')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment);
  return keysetPage(q, page);
}

export async function endpointUrls(db: Db, merchantId: string, environment: Environment): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['id', 'url'])
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment)
    .limit(1000)
    .execute();
  return new Map(rows.map((r) => [r.id, r.url]));
}

/** The endpoint each delivery is bound to (the list view of the webhooks area leaves it out). */
export async function deliveryEndpoints(db: Db, ids: readonly string[]): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('webhook_deliveries').select(['id', 'endpoint_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.endpoint_id]));
}

/** An object's events, oldest first: its state history as the webhooks told it. */
export async function objectEvents(db: Db, merchantId: string, environment: Environment, objectId: string) {
  return db
    .selectFrom('events')
    .select(['id', 'type', 'status', 'status_version', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment)
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

/** Sessions past the idle or the absolute timeout, and sign-in failures out of the window. */
export async function deleteStaleRows(
  db: Db,
  now: Date,
  limits: { idleSeconds: number; maxSeconds: number; failureWindowSeconds: number },
) {
  const before = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const sessions = await db
    .deleteFrom('console_sessions')
    .where((eb) =>
      eb.or([eb('last_seen_at', '<=', before(limits.idleSeconds)), eb('created_at', '<=', before(limits.maxSeconds))]),
    )
    .executeTakeFirst();
  const failures = await db
    .deleteFrom('console_login_failures')
    .where('failed_at', '<=', before(limits.failureWindowSeconds))
    .executeTakeFirst();
  return { sessions: Number(sessions.numDeletedRows), failures: Number(failures.numDeletedRows) };
}

/** The merchant's cards of every member (the cards area lists one member's at a time). */
export async function listMerchantCards(db: Db, merchantId: string, environment: Environment, page: PageParams) {
  const q = db
    .selectFrom('cards')
    .select(['seq', 'id', 'member_id', 'form_factor', 'currency', 'status', 'last4', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment);
  return keysetPage(q, page);
}

/** The merchant's card applications, newest first (the sandbox helpers decide pending ones). */
export async function listMerchantApplications(db: Db, merchantId: string, environment: Environment, limit: number) {
  return db
    .selectFrom('card_applications')
    .select(['id', 'member_id', 'status', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}
