import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { html, type FieldError, type FormFrame, type SafeHtml } from './html.js';
import type { Ticket } from './rules.js';
import type { TicketPurpose } from './tables.js';
import { readBranding } from './branding.js';

/**
 * The hosted-screen framework's contract with the areas (docs/hosted-screens.md). An area builds a
 * `HostedScreen` for each ticket purpose it owns and the composition root (src/routes.ts) hands
 * the list to `hostedScreenRoutes`. The framework owns everything around a screen: finding the
 * ticket, the host check, expiry by the merchant's clock, CSRF, the request body (fields and
 * files, with limits), the page shell, the security headers and the locked transaction a submit
 * runs in. A screen owns its form, its validation and what a submission does, including the
 * ticket's state change (`completeTicket` / `voidTicket` in service.ts).
 */

/** What a screen renders into the page shell. */
export interface ScreenPage {
  title: string;
  body: SafeHtml;
}

/** The input of one render: a first view (no values, no errors) or a re-render after a refused submit. */
export interface ScreenState {
  /** Where the form posts and the CSRF token it carries: pass to `form()` (html.ts). */
  form: FormFrame;
  /** What was entered (field name to text); empty on a first view. */
  values: Readonly<Record<string, string>>;
  errors: readonly FieldError[];
  /** The merchant's time (its sandbox clock). */
  now: Date;
}

/** A file part of a multipart submission. Held in memory, never logged. */
export interface UploadedFile {
  field: string;
  /** The bytes received, up to the size limit. */
  data: Buffer;
  /** The file was larger than `fileSizeMaxBytes`: `data` is cut and must not be used. */
  tooLarge: boolean;
  /** As the browser declared it; never trusted (sniff the bytes). */
  declaredType: string;
}

/** The form fields of a submission: the last value of each name. */
export type FormFields = Readonly<Record<string, string>>;

export type SubmitResult =
  /** Refused: the same page again with the values entered and an error next to each field. */
  | { kind: 'invalid'; values: Record<string, string>; errors: FieldError[] }
  /** Accepted: the page that says so (the ticket is spent by then). */
  | { kind: 'done'; page: ScreenPage };

export interface HostedScreen {
  readonly purpose: TicketPurpose;
  /** Whether the form carries files (then it posts multipart/form-data); a submission with files to a screen without is
   * refused (400). */
  readonly acceptsFiles: boolean;
  /** The page for an open ticket. Reads only (through `ctx.db`). */
  render(ctx: ServiceContext, ticket: Ticket, state: ScreenState): Promise<ScreenPage>;
  /**
   * A submission, in one transaction that holds the ticket's row lock; the ticket is open and
   * unexpired at `now`. Answers `invalid` (nothing done, or only what must survive a refusal such
   * as a counted wrong code) or `done` after spending the ticket.
   */
  submit(
    ctx: ServiceContext,
    trx: Transaction<Database>,
    ticket: Ticket,
    form: FormFields,
    files: readonly UploadedFile[],
    now: Date,
    prepared?: unknown,
  ): Promise<SubmitResult>;
  /**
   * Optional: what a submission needs from a provider, fetched after the CSRF check and before the
   * submit transaction (a provider call must not wait while the ticket's row is locked, and the
   * embedded database has one connection). Its result reaches `submit` as `prepared`, in memory only.
   */
  prepare?(ctx: ServiceContext, ticket: Ticket): Promise<unknown>;
  /**
   * `POST /v1/sandbox/hosted-screens/{ticket_id}/complete` (extensions 8): what a member's valid
   * submission (`submitted`) or decision (`approved`, `declined`) would do, in the caller's locked
   * transaction. An outcome the screen does not know: throw `ApiError('invalid_request')`.
   */
  sandboxComplete(
    ctx: ServiceContext,
    trx: Transaction<Database>,
    ticket: Ticket,
    outcome: SandboxOutcome,
    now: Date,
  ): Promise<void>;
}

export const sandboxOutcomes = ['submitted', 'approved', 'declined'] as const;
export type SandboxOutcome = (typeof sandboxOutcomes)[number];

/** The screens by purpose; a purpose without one gets the "not available yet" page. */
export interface ScreenRegistry {
  get(purpose: TicketPurpose): HostedScreen;
}

export function screenRegistry(screens: readonly HostedScreen[]): ScreenRegistry {
  const byPurpose = new Map<TicketPurpose, HostedScreen>();
  for (const s of screens) {
    if (byPurpose.has(s.purpose)) throw new Error(`hosted screens: two screens for purpose ${s.purpose}`);
    byPurpose.set(s.purpose, s);
  }
  return { get: (purpose) => byPurpose.get(purpose) ?? unavailableScreen(purpose) };
}

/** The placeholder of a purpose whose area has no screen yet (card supplement, card reveal). */
export function unavailableScreen(purpose: TicketPurpose): HostedScreen {
  const page = (name: string | undefined): ScreenPage => ({
    title: 'Not available yet',
    body: html`<p>This screen is not available yet. Ask ${name ?? 'the app that sent you here'}.</p>`,
  });
  return {
    purpose,
    acceptsFiles: false,
    render: async (ctx, ticket) => page((await readBranding(ctx.db, ticket.merchant_id))?.name),
    submit: async (_ctx, trx, ticket) => ({
      kind: 'done',
      page: page((await readBranding(trx, ticket.merchant_id))?.name),
    }),
    sandboxComplete: async () => {
      throw new ApiError('state_invalid', 'This kind of hosted screen cannot be completed yet.');
    },
  };
}
