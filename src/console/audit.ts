import type { Environment, Db } from '../db/schema.js';
import { insertAudit } from './queries/audit.js';

/** The console's audit log: a line per change, written in the transaction of the change. */

/**
 * A line about the account itself (recovery codes, password, the operator's reset): it belongs to
 * no environment, so it is written in the audit log of both. `actor` is who made it when not the
 * user (the operator).
 */
export async function auditAccount(
  db: Db,
  user: { id: string; merchant_id: string; email: string; actor?: string },
  action: string,
  detail: string,
  now: Date,
): Promise<void> {
  for (const environment of ['sandbox', 'production'] as const) {
    await insertAudit(db, {
      merchantId: user.merchant_id,
      environment,
      userId: user.id,
      userEmail: user.actor ?? user.email,
      action,
      objectId: user.id,
      detail,
      now,
    });
  }
}

/** One line of the audit log, in the transaction of the change it records. */
export async function audit(
  db: Db,
  session: { merchantId: string; userId: string; email: string },
  environment: Environment,
  action: string,
  objectId: string,
  detail: string,
  now: Date,
): Promise<void> {
  await insertAudit(db, {
    merchantId: session.merchantId,
    environment,
    userId: session.userId,
    userEmail: session.email,
    action,
    objectId,
    detail,
    now,
  });
}

/** One line of the audit log for a change made on a console page: by its user, in its environment, at its time. */
export async function auditPage(
  db: Db,
  page: { session: { merchantId: string; userId: string; email: string }; environment: Environment; now: Date },
  action: string,
  objectId: string,
  detail: string,
): Promise<void> {
  await audit(db, page.session, page.environment, action, objectId, detail, page.now);
}
