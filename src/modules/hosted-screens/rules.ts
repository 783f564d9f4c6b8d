import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { HostedTicketsTable, TicketPurpose } from './tables.js';

export type Ticket = Selectable<HostedTicketsTable>;

/** The member a ticket was issued for, in its merchant's environment: whom its screen acts for. */
export const ticketScope = (t: Ticket) => ({
  merchantId: t.merchant_id,
  environment: t.environment,
  memberId: t.member_id,
});

/** Lifetimes from the reference's constants: hosted-screen links 24 hours, step-up 300 seconds. */
export const ticketTtlSeconds: Record<TicketPurpose, number> = {
  kyc: 24 * 3600,
  profile_update: 24 * 3600,
  card_supplement: 24 * 3600,
  card_reveal: 300,
  step_up: 300,
};

export const ticketIdShape = /^kyc_[0-9a-f]{32}$/;

export function newTicketId(): string {
  return `kyc_${randomBytes(16).toString('hex')}`;
}

/**
 * The origin (scheme://host) a ticket issued by this request is served on: the configured public
 * base URL of the request's environment (`PUBLIC_BASE_URL_SANDBOX`, `PUBLIC_BASE_URL_PRODUCTION`),
 * never the request's Host header, which the caller chooses (a forged one made the link point
 * anywhere).
 */
export function hostedOrigin(req: FastifyRequest): string {
  return req.publicBaseUrl;
}

/** @deprecated The name of `hostedOrigin` before the origin came from configuration. */
export const requestOrigin = hostedOrigin;

/**
 * Whether a page is asked on the host its ticket's link names (the scheme is not compared: a
 * proxy that ends TLS may not be a trusted one). Another host, so another environment or a
 * name the link does not use, is "not found".
 */
export function isTicketHost(ticket: Pick<Ticket, 'public_origin'>, req: FastifyRequest): boolean {
  try {
    const origin = new URL(ticket.public_origin);
    // The request's host read with the link's scheme, so its default port compares as the link's.
    return new URL(`${origin.protocol}//${req.host}`).host === origin.host;
  } catch {
    return false;
  }
}

export function hostedUrl(ticket: Pick<Ticket, 'id' | 'public_origin'>): string {
  return `${ticket.public_origin}/hosted/${ticket.id}`;
}

/** The reference's hosted-screen ticket: `{id, hosted_url, expires_at}` (Unix seconds). */
export function ticketView(ticket: Pick<Ticket, 'id' | 'public_origin' | 'expires_at'>) {
  return {
    id: ticket.id,
    hosted_url: hostedUrl(ticket),
    expires_at: Math.floor(new Date(ticket.expires_at).getTime() / 1000),
  };
}

/** Pure: can this ticket's screen still be used at `now` (the merchant's clock)? */
export function isUsable(ticket: Pick<Ticket, 'status' | 'expires_at'>, now: Date): boolean {
  return ticket.status === 'open' && new Date(ticket.expires_at).getTime() > now.getTime();
}

/** A ticket as the sandbox helper answers it: the reference's three fields, its purpose and where it stands. */
export function ticketStateView(
  ticket: Pick<Ticket, 'id' | 'public_origin' | 'expires_at' | 'purpose' | 'status' | 'outcome'>,
) {
  return { ...ticketView(ticket), purpose: ticket.purpose, status: ticket.status, outcome: ticket.outcome };
}
