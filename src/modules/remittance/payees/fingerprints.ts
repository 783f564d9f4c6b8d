/**
 * Fingerprints of the platform-level shared payee (pure; docs/remittance.md, "Fingerprints").
 *
 * - The account fingerprint keys the shared payee entity: SHA-256 over the four corridor segments
 *   (country, currency, payment method, clearing system as sent: case preserved) and the account
 *   identifier's normalised parts (IBAN, account number, routing code, BIC, proxy), sorted by key.
 *   Formatting never makes another payee: `DE89 3704 0044 …` and `de89370400…` are one account.
 * - The holder fingerprint matches the holder name: letters and digits only, accents folded,
 *   upper case, tokens sorted (`Müller, Anna` = `ANNA MULLER`). Equal: `linked`; different:
 *   `review` (the mismatch is recorded, the link still made).
 */
import { createHash } from 'node:crypto';

export interface CorridorSegments {
  country: string;
  currency: string;
  paymentMethod: string;
  clearingSystem: string;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** `identifier` as [key, normalised value] pairs; their order does not matter. */
export function accountFingerprint(
  segments: CorridorSegments,
  identifier: ReadonlyArray<readonly [string, string]>,
): string {
  if (identifier.length === 0) throw new Error('remittance: an account fingerprint needs at least one identifier part');
  const parts = [...identifier].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`);
  // Length-prefixed so that no two different inputs can join to the same text.
  const fields = [segments.country, segments.currency, segments.paymentMethod, segments.clearingSystem, ...parts];
  return sha256(`payee-account:v1\n${fields.map((f) => `${f.length}:${f}`).join('\n')}`);
}

/** The holder name as compared: accents folded, letters and digits only, upper case, tokens sorted. */
export function holderNameKey(name: string): string {
  const folded = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/ß/g, 'SS')
    .toUpperCase();
  const tokens = folded.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  return tokens.sort().join(' ');
}

export function holderFingerprint(name: string): string {
  return sha256(`payee-holder:v1\n${holderNameKey(name)}`);
}
