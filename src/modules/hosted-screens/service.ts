import type { Kysely, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { TicketPurpose } from './tables.js';
import { newTicketId, ticketTtlSeconds, type Ticket } from './rules.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface TicketRequest {
  merchantId: string;
  environment: Environment;
  memberId: string;
  purpose: TicketPurpose;
  origin: string;
  subjectId?: string | null;
  action?: string | null;
  objectRef?: string | null;
  secretHash?: string | null;
}

/** Issues a ticket in the caller's transaction; it expires by the merchant's clock. */
export async function issueTicket(ctx: ServiceContext, trx: Db, r: TicketRequest): Promise<Ticket> {
  const now = await ctx.clock.now(trx, { merchantId: r.merchantId, environment: r.environment });
  return trx
    .insertInto('hosted_tickets')
    .values({
      id: newTicketId(),
      merchant_id: r.merchantId,
      environment: r.environment,
      member_id: r.memberId,
      purpose: r.purpose,
      subject_id: r.subjectId ?? null,
      action: r.action ?? null,
      object_ref: r.objectRef ?? null,
      outcome: null,
      public_origin: r.origin,
      expires_at: new Date(now.getTime() + ticketTtlSeconds[r.purpose] * 1000),
      secret_hash: r.secretHash ?? null,
      completed_at: null,
      used_at: null,
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

