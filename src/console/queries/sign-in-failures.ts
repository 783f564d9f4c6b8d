import type { Db } from '../../db/schema.js';

/** The sign-in throttle's failures (throttle.ts). */

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
