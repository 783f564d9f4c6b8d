import type { CallContext } from '../port.js';

/**
 * The notifier: delivers a one-time code to a member (strong authentication, docs/step-up.md).
 * The service keeps only the code's hash; the notifier is the one place the code travels in
 * clear, as an SMS gateway would carry it. A real adapter (SMS, push) implements `sendCode`;
 * the built-in simulator records each message instead, so tests and operators can read the code.
 */
export interface Notifier {
  readonly name: 'notifier';
  /** Delivers the code. Throws when the provider refused it (the caller logs it; the member can ask for a new
   * challenge). */
  sendCode(call: CallContext, message: OneTimeCodeMessage): Promise<void>;
  /** The messages a simulator recorded; absent on a real provider. */
  readonly outbox?: NotifierOutbox;
}

export interface OneTimeCodeMessage {
  /** `mem_<uuid>`: the provider looks up how to reach the member. */
  memberId: string;
  /** What the code answers: the step-up challenge id. */
  reference: string;
  /** Six digits. */
  code: string;
  /** Plain words of what the code authorises ("confirm a withdrawal from your wallet"). */
  purpose: string;
  expiresInSeconds: number;
}

export interface DeliveredCode {
  merchantId: string;
  environment: string;
  memberId: string;
  reference: string;
  code: string;
  message: string;
  createdAt: Date;
}

export interface NotifierOutbox {
  /** A member's messages, newest first (at most `limit`, bounded by `outboxPageMax`). */
  list(filter: { memberId: string; limit?: number }): Promise<DeliveredCode[]>;
}

export const outboxPageMax = 100;

/** The text a member receives. */
export function codeMessageText(m: OneTimeCodeMessage): string {
  return (
    `${m.code} is your code to ${m.purpose}. It expires in ${Math.round(m.expiresInSeconds / 60)} minutes. ` +
    `Never share it.`
  );
}
