import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { SimulatedUpstream, simulatorRefusedPrefix, type SimulatorOptions } from '../simulated-provider.js';
import type { CallContext, CallOutcome } from '../port.js';
import type {
  ConversionDates,
  ConversionDatesOutcome,
  NameCheckOutcome,
  NameCheckRequest,
  PayeeRegistration,
  RegistrationOutcome,
  RemittanceSubmitRequest,
  RemittanceUpstream,
} from './port.js';
import { daysFrom, isSettlementDay, nextBusinessDay } from './settlement-calendar.js';

export { nextBusinessDay };

/**
 * The simulated provider's lines: the payout currencies each serves and the currency it settles
 * in (null: served but not configured). Sandbox test data: `JPY` on express has no settlement
 * currency; pobo serves only EUR and GBP.
 */
export const simulatedLines: Readonly<Record<'express' | 'pobo', Readonly<Record<string, string | null>>>> = {
  express: { EUR: 'USD', GBP: 'USD', USD: 'USD', SGD: 'USD', HKD: 'USD', JPY: null },
  pobo: { EUR: 'EUR', GBP: 'EUR' },
};

/** Hour (UTC) after which a line no longer settles today. */
export const simulatedCutoffHourUtc = { express: 14, pobo: 10 } as const;

/** Days of the calendar the provider answers (the coming week). */
export const conversionDaysCount = 7;

/**
 * Sandbox test data of the name check: the provider's directory of account holders, by the
 * account's primary identifier (IBAN or account number). An identifier ending in `9999` is at a
 * bank the check cannot reach (`unavailable`); one not in the directory matches any name.
 */
export const simulatedAccountHolders: Readonly<Record<string, string>> = {
  DE89370400440532013000: 'Max Mustermann',
  '12345678': 'Jane Smith',
  '000123456789': 'John Doe',
};

const nameKey = (name: string) =>
  name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toUpperCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .sort()
    .join(' ');

/** Levenshtein distance, bounded: gives up (answers max + 1) beyond `max`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** The simulated directory's verdict on a name (pure). */
export function simulatedNameCheck(onFile: string, submitted: string): NameCheckOutcome {
  const a = nameKey(onFile);
  const b = nameKey(submitted);
  if (a === b) return { kind: 'match' };
  const ta = a.split(' ');
  const tb = b.split(' ');
  const subset = (x: string[], y: string[]) => x.every((t) => y.includes(t));
  // A typo or two, or the same name with a token more or less (a middle name).
  const close =
    editDistance(a, b, 2) <= 2 || (Math.min(ta.length, tb.length) >= 2 && (subset(ta, tb) || subset(tb, ta)));
  return close ? { kind: 'close_match', suggestedName: onFile } : { kind: 'no_match' };
}

function primaryIdentifier(fields: Record<string, string>): string | undefined {
  return fields['bank_details.iban'] ?? fields['bank_details.account_number'] ?? fields['bank_details.proxy_id'];
}

export type ClockOf = (call: CallContext) => Date | Promise<Date>;

export class SimulatedRemittance extends SimulatedUpstream<'remittance'> implements RemittanceUpstream {
  /** `now`: the provider's time for a caller (the merchant's clock: the sandbox clock moves its calendar). */
  constructor(
    db: Kysely<Database>,
    options: SimulatorOptions,
    private readonly now: ClockOf,
  ) {
    super(db, 'remittance', 'RM', options);
  }

  async registerPayee(_call: CallContext, req: PayeeRegistration): Promise<RegistrationOutcome> {
    if (req.holderName.toUpperCase().startsWith(simulatorRefusedPrefix))
      return { kind: 'rejected', reason: 'the provider refuses this beneficiary' };
    const ref = createHash('sha256').update(`payee|${req.payeeKey}`).digest('hex').slice(0, 16).toUpperCase();
    return { kind: 'registered', payeeRef: `RB${ref}` };
  }

  async checkName(_call: CallContext, req: NameCheckRequest): Promise<NameCheckOutcome> {
    const id = primaryIdentifier(req.fields);
    if (!id) return { kind: 'unavailable', reason: 'no account identifier' };
    if (id.endsWith('9999')) return { kind: 'unavailable', reason: 'the beneficiary bank does not answer name checks' };
    const onFile = simulatedAccountHolders[id];
    return onFile === undefined ? { kind: 'match' } : simulatedNameCheck(onFile, req.holderName);
  }

  async conversionDates(
    call: CallContext,
    req: { currency: string; line: 'express' | 'pobo' },
  ): Promise<ConversionDatesOutcome> {
    const line = simulatedLines[req.line];
    if (!Object.hasOwn(line, req.currency)) return { kind: 'line_closed' };
    const settlement = line[req.currency];
    if (!settlement) return { kind: 'no_settlement_currency' };
    return { kind: 'dates', ...calendarFor(await this.now(call), req.line, req.currency, settlement) };
  }

  async submit(call: CallContext, req: RemittanceSubmitRequest): Promise<CallOutcome<{ payout_date: string }>> {
    const settlement = simulatedLines.express[req.payoutCurrency];
    const refusal = settlement ? undefined : `payout currency ${req.payoutCurrency} not served`;
    const payoutDate = settlement
      ? calendarFor(await this.now(call), 'express', req.payoutCurrency, settlement).earliestValid
      : '';
    return this.provider.submit(call, {
      requestId: req.requestId,
      operation: 'remit',
      detail: { payout_date: payoutDate },
      refusal,
    });
  }

  sandboxReturn(_call: CallContext, requestId: string): Promise<CallOutcome> {
    return this.provider.refund(requestId);
  }
}

/**
 * The provider's calendar for a line and payout currency from `now` (pure): the coming seven
 * days, each valid when both currencies settle that day and, for today, before the line's
 * cut-off. Same currency: no conversion, no dates, the earliest payout day alone.
 */
export function calendarFor(now: Date, line: 'express' | 'pobo', payout: string, settlement: string): ConversionDates {
  const beforeCutoff = now.getUTCHours() < simulatedCutoffHourUtc[line];
  const valid = (date: string, i: number) =>
    (i > 0 || beforeCutoff) && isSettlementDay(payout, date) && isSettlementDay(settlement, date);
  const horizon = daysFrom(now, 30);
  const earliestValid = horizon.find((d, i) => valid(d, i)) ?? horizon[horizon.length - 1]!;
  const sameCurrency = payout === settlement;
  return {
    settlementCurrency: settlement,
    payoutCurrency: payout,
    sameCurrency,
    dates: sameCurrency
      ? []
      : horizon.slice(0, conversionDaysCount).map((date, i) => ({ date, valid: valid(date, i) })),
    earliestValid,
  };
}
