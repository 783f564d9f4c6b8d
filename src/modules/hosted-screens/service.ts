import type { Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import { ownerColumns } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, invalidFields, type ErrorCode } from '../../platform/errors.js';
import type { TicketPurpose } from './tables.js';
import { isUsable, newTicketId, ticketStateView, ticketTtlSeconds, type Ticket } from './rules.js';
import { findTicket, frameAncestorsOf, insertTicket, putFrameAncestors } from './queries.js';
import type { SandboxOutcome, ScreenRegistry } from './screen.js';
import { normaliseFrameAncestors, type FrameAncestorProblem } from './security-headers.js';

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
  return insertTicket(trx, {
    id: newTicketId(),
    ...ownerColumns(r),
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
  });
}

/** The codes each function can answer: the routes declare these lists. */
export const hostedScreenErrors = {
  sandboxComplete: ['not_found', 'state_invalid', 'invalid_request', 'duplicate_resource'],
  putSettings: ['invalid_fields'],
  operatorSettings: ['not_found', 'invalid_fields'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/**
 * `POST /v1/sandbox/hosted-screens/{ticket_id}/complete`: the ticket's screen does what the
 * member's submission or decision would, in this transaction, holding the ticket's lock. Another
 * merchant's or environment's ticket is `not_found`; one no longer open or past its expiry by the
 * merchant's clock is `state_invalid`.
 */
export async function completeInSandbox(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  screens: ScreenRegistry,
  caller: { merchantId: string; environment: Environment },
  ticketId: string,
  outcome: SandboxOutcome,
) {
  const ticket = await findTicket(trx, ticketId, true);
  if (!ticket || ticket.merchant_id !== caller.merchantId || ticket.environment !== caller.environment)
    throw new ApiError('not_found');
  const now = await ctx.clock.now(trx, caller);
  if (!isUsable(ticket, now)) throw new ApiError('state_invalid', 'The ticket has been used, has expired or is void.');
  await screens.get(ticket.purpose).sandboxComplete(ctx, trx, ticket, outcome, now);
  const after = await findTicket(trx, ticketId);
  return ticketStateView(after!);
}

function refusedOrigins(problems: readonly { index: number; problem: FrameAncestorProblem }[]) {
  return invalidFields(
    problems.map((p) => ({
      key: `frame_ancestors[${p.index}]`,
      reason: p.problem === 'too_many' ? 'too_long' : 'pattern',
    })),
  );
}

/** Sets the origins allowed to frame the merchant's screens in one environment (validated, normalised). */
export async function setFrameAncestors(
  ctx: ServiceContext,
  trx: Db,
  merchantId: string,
  environment: Environment,
  values: readonly string[],
) {
  const checked = normaliseFrameAncestors([...new Set(values.map((v) => v.trim()))], environment);
  if ('problems' in checked) throw refusedOrigins(checked.problems);
  const now = await ctx.clock.now(trx, { merchantId, environment });
  await putFrameAncestors(trx, merchantId, environment, checked.origins, now);
  return { frame_ancestors: checked.origins };
}

export async function getFrameAncestors(db: Db, merchantId: string, environment: Environment) {
  return { frame_ancestors: await frameAncestorsOf(db, merchantId, environment) };
}
