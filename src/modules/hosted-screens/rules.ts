import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { HostedTicketsTable, TicketPurpose } from './tables.js';

export type Ticket = Selectable<HostedTicketsTable>;

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

/** The origin (scheme://host) of the call that issues a ticket: the screen is served on the same host. */
export function requestOrigin(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

export function hostedUrl(ticket: Pick<Ticket, 'id' | 'public_origin'>): string {
  return `${ticket.public_origin}/hosted/${ticket.id}`;
}

/** The reference's hosted-screen ticket: `{id, hosted_url, expires_at}` (Unix seconds). */
export function ticketView(ticket: Pick<Ticket, 'id' | 'public_origin' | 'expires_at'>) {
  return { id: ticket.id, hosted_url: hostedUrl(ticket), expires_at: Math.floor(new Date(ticket.expires_at).getTime() / 1000) };
}

/** Pure: can this ticket's screen still be used at `now` (the merchant's clock)? */
export function isUsable(ticket: Pick<Ticket, 'status' | 'expires_at'>, now: Date): boolean {
  return ticket.status === 'open' && new Date(ticket.expires_at).getTime() > now.getTime();
}


/** A ticket as the sandbox helper answers it: the reference's three fields, its purpose and where it stands. */
export function ticketStateView(ticket: Pick<Ticket, 'id' | 'public_origin' | 'expires_at' | 'purpose' | 'status' | 'outcome'>) {
  return { ...ticketView(ticket), purpose: ticket.purpose, status: ticket.status, outcome: ticket.outcome };
}
