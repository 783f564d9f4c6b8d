import type { Selectable } from 'kysely';
import type { Db, Environment } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import { newId } from '../../platform/ids.js';
import { type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import type { ConsoleAuditTable } from '../tables.js';

/** The console's audit log. */

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
  const q = db.selectFrom('console_audit').selectAll().where(inScope({ merchantId, environment }));
  return keysetPage(q, page, (r: Selectable<ConsoleAuditTable>) => r);
}
