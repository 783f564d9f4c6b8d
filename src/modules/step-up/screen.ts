import { ApiError } from '../../platform/errors.js';
import {
  type FieldError,
  form,
  type HostedScreen,
  html,
  type ScreenPage,
  type ScreenState,
  textField,
  type Ticket,
} from '../hosted-screens/index.js';
import { enterStepUpCode, settleStepUp } from './completion.js';
import { isStepUpAction, sandboxStepUpCode, stepUpActions, stepUpAttemptsMax, stepUpCodeLength } from './rules.js';

/** Plain text (nothing to escape), kept whole in the page. */
const neverShare = 'Never share it: we will never ask you for it by phone or e-mail.';

/**
 * The step-up screen (docs/step-up.md): says in plain words what the member is authorising (the
 * action's line in `stepUpActions`; no amounts, no address), asks for the one-time code the
 * notifier sent, and tells what is left: minutes and attempts. Five wrong codes void the
 * challenge and the page says so.
 */

const codeField = 'code';

function wordsFor(ticket: Ticket): { title: string; purpose: string; done: string } {
  return ticket.action && isStepUpAction(ticket.action)
    ? stepUpActions[ticket.action]
    : {
        title: 'Confirm it is you',
        purpose: 'confirm a request made in your name',
        done: 'Thank you. Go back to the app to finish.',
      };
}

function minutesLeft(ticket: Ticket, now: Date): number {
  return Math.max(1, Math.ceil((new Date(ticket.expires_at).getTime() - now.getTime()) / 60_000));
}

function attemptsNote(ticket: Ticket): string {
  const left = stepUpAttemptsMax - ticket.failed_attempts;
  return left === 1 ? 'You have 1 attempt left.' : `You have ${left} attempts left.`;
}

function render(ticket: Ticket, state: ScreenState): ScreenPage {
  const words = wordsFor(ticket);
  const minutes = minutesLeft(ticket, state.now);
  // After a refused code the error beside the field says what is left; the hint does not repeat it.
  const note =
    state.errors.length > 0
      ? ''
      : ticket.failed_attempts > 0
        ? ` ${attemptsNote(ticket)}`
        : ` After ${stepUpAttemptsMax} wrong codes this request is cancelled.`;
  const hint = `${stepUpCodeLength} digits.${note}`;
  const sandbox =
    ticket.environment === 'sandbox'
      ? html`<p class="notice">Sandbox: the code <strong>${sandboxStepUpCode}</strong> is always accepted.</p>`
      : '';
  return {
    title: words.title,
    body: html`<p>To ${words.purpose}, enter the code we sent you.</p>
<p>The code expires in about ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}. ${neverShare}</p>
${sandbox}${form(
      state.form,
      { submitLabel: 'Confirm' },
      textField(state, {
        name: codeField,
        label: 'Code',
        hint,
        required: true,
        autocomplete: 'one-time-code',
        inputMode: 'numeric',
        maxLength: stepUpCodeLength + 2,
      }),
    )}`,
  };
}

const page = (title: string, text: string): ScreenPage => ({ title, body: html`<p>${text}</p>` });

export const stepUpScreen: HostedScreen = {
  purpose: 'step_up',
  acceptsFiles: false,

  render: async (_ctx, ticket, state) => render(ticket, state),

  async submit(_ctx, trx, ticket, fields, _files, now) {
    const entered = fields[codeField] ?? '';
    const outcome = await enterStepUpCode(trx, ticket, entered, now);
    const refuse = (message: string) => {
      const errors: FieldError[] = [{ field: codeField, message }];
      return { kind: 'invalid' as const, values: { [codeField]: entered }, errors };
    };
    switch (outcome.kind) {
      case 'approved':
        return { kind: 'done', page: page('Confirmed', wordsFor(ticket).done) };
      case 'malformed':
        return refuse(`Enter the ${stepUpCodeLength}-digit code, numbers only.`);
      case 'wrong':
        return refuse(
          `That code is not ` +
            `correct. ` +
            (outcome.attemptsLeft === 1
              ? 'You have 1 attempt left.'
              : `You have ${outcome.attemptsLeft} attempts left.`),
        );
      case 'exhausted':
        return {
          kind: 'done',
          page: page(
            'Request cancelled',
            `That was the ${stepUpAttemptsMax}th wrong code, so this request has been cancelled and the code ` +
              `no longer works. Go back to the app and start again: you will get a new code.`,
          ),
        };
    }
  },

  async sandboxComplete(_ctx, trx, ticket, outcome, now) {
    if (outcome === 'submitted')
      throw new ApiError('invalid_request', 'A step-up challenge is completed with outcome approved or declined.');
    await settleStepUp(trx, ticket, outcome, now);
  },
};
