import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { CallContext } from '../port.js';
import { insertSimNotification, selectSimNotifications } from '../queries/notifier.js';
import { codeMessageText, outboxPageMax, type Notifier, type NotifierOutbox, type OneTimeCodeMessage } from './port.js';

/**
 * The built-in notifier: each message is written to `upstream_sim_notifications` (the simulator's
 * own books, outside our transactions, like every simulator) and nothing is sent anywhere.
 */
export class SimulatedNotifier implements Notifier {
  readonly name = 'notifier' as const;
  readonly outbox: NotifierOutbox;

  constructor(private readonly db: Kysely<Database>) {
    this.outbox = {
      list: async ({ memberId, limit }) => {
        const rows = await selectSimNotifications(this.db, memberId, Math.min(Math.max(limit ?? 20, 1), outboxPageMax));
        return rows.map((r) => ({
          merchantId: r.merchant_id,
          environment: r.environment,
          memberId: r.member_id,
          reference: r.reference,
          code: r.code,
          message: r.message,
          createdAt: new Date(r.created_at),
        }));
      },
    };
  }

  async sendCode(call: CallContext, m: OneTimeCodeMessage): Promise<void> {
    await insertSimNotification(this.db, {
      merchant_id: call.merchantId,
      environment: call.environment,
      member_id: m.memberId,
      reference: m.reference,
      code: m.code,
      message: codeMessageText(m),
    });
  }
}
