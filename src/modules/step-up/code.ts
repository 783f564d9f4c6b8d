import { randomBytes, randomInt, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { stepUpCodeLength } from './rules.js';

/**
 * One-time codes of step-up challenges: drawn at random, stored only as a salted scrypt hash
 * (`hosted_tickets.secret_hash`, form `scrypt$<salt>$<hash>`, base64url). A six-digit code has a
 * million values, so a fast hash would give it away to anyone holding a copy of the table; scrypt
 * makes trying them all take hours, against a code that lives 300 seconds.
 */

const scryptParams: ScryptOptions = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const hashBytes = 32;
const saltBytes = 16;

function derive(code: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(code, salt, hashBytes, scryptParams, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** A fresh code: `stepUpCodeLength` digits, uniformly drawn. */
export function newStepUpCode(): string {
  return String(randomInt(0, 10 ** stepUpCodeLength)).padStart(stepUpCodeLength, '0');
}

export async function hashStepUpCode(code: string): Promise<string> {
  const salt = randomBytes(saltBytes);
  return `scrypt$${salt.toString('base64url')}$${(await derive(code, salt)).toString('base64url')}`;
}

/** Whether `code` is the one `stored` was made from (constant time over the hash). A malformed `stored` matches
 * nothing. */
export async function stepUpCodeMatches(code: string, stored: string | null): Promise<boolean> {
  const [scheme, salt, hash] = (stored ?? '').split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(code, Buffer.from(salt, 'base64url'));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
