import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../platform/ids.js';

/**
 * Recovery codes of the second factor (docs/console.md "Recovery codes"): pure functions.
 *
 * A set is 10 codes, each 16 characters of Crockford's base32 (80 random bits), shown as four
 * groups of four (`k7tq-2mxa-9fwe-c4hn`). Only a hash is stored, as for API keys: SHA-256 of the
 * user id and the code. 80 bits cannot be guessed offline from a copy of the table, and online
 * guessing is under the sign-in throttle. Typing is forgiving: case, spaces and hyphens do not count.
 */

export const recoveryCodesPerSet = 10;
const groups = 4;
const groupLength = 4;
const codeLength = groups * groupLength;
/**
 * Crockford's base32 in lower case (5 bits a character): no i, l, o or u; when typed, o counts as
 * 0 and i or l as 1, so a code copied from paper by eye still works.
 */
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';

export function newRecoveryCode(): string {
  const bytes = randomBytes(codeLength);
  let code = '';
  for (let i = 0; i < codeLength; i++) code += alphabet[bytes[i]! & 31];
  return code.match(new RegExp(`.{${groupLength}}`, 'g'))!.join('-');
}

export function newRecoveryCodes(count = recoveryCodesPerSet): string[] {
  return Array.from({ length: count }, newRecoveryCode);
}

/** The code as typed, in its stored form (lower case, no separators); undefined when it cannot be one. */
export function normaliseRecoveryCode(typed: string): string | undefined {
  const code = typed.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  return code.length === codeLength && [...code].every((c) => alphabet.includes(c)) ? code : undefined;
}

/** Whether the typed text looks like a recovery code rather than a 6-digit TOTP code. */
export const isRecoveryCodeShape = (typed: string) => normaliseRecoveryCode(typed) !== undefined;

export function recoveryCodeHash(userId: string, typed: string): string | undefined {
  const code = normaliseRecoveryCode(typed);
  return code === undefined ? undefined : sha256Hex(`console-recovery\n${userId}\n${code}`);
}
