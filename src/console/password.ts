import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Console passwords, hashed with scrypt (Node's built-in `crypto.scrypt`, RFC 7914). scrypt is
 * memory-hard: each guess needs N·r·128 bytes (32 MiB here), which makes guessing on GPUs and
 * ASICs expensive. N = 2^15, r = 8, p = 3 is OWASP's equivalent of its minimum (N = 2^17, r = 8,
 * p = 1) at a quarter of the memory, so that sign-ins at once do not take 128 MiB each. It is part of Node's OpenSSL,
 * so the console needs no native npm package (a
 * prebuilt argon2 binary is one more supply-chain and platform dependency for the same property).
 *
 * Stored as `scrypt$N$r$p$<salt b64url>$<hash b64url>`: the parameters travel with the hash, so
 * they can be raised later and old hashes still verify, and are re-hashed at the next sign-in
 * (`needsRehash`).
 */

const keyBytes = 32;
const saltBytes = 16;
/** Password length bounds: 12 characters at least (NIST SP 800-63B suggests 8 or more), at most 200. */
export const passwordLengthMin = 12;
export const passwordLengthMax = 200;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyBytes, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

const costOf = (log2N: number) => ({ N: 2 ** log2N, r: 8, p: 3 });

/** A new hash; `log2N` is the work factor (`Config.consolePasswordCost`: N = 2^log2N, r = 8, p = 3). */
export async function hashPassword(password: string, log2N: number): Promise<string> {
  const cost = costOf(log2N);
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` matches the stored hash (constant-time comparison); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const actual = await derive(password, salt, { N, r, p });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with weaker parameters than new ones (its password is re-hashed when next given). */
export function needsRehash(stored: string, log2N: number): boolean {
  const [N, r, p] = stored.split('$').slice(1, 4).map(Number);
  const cost = costOf(log2N);
  return !(N! >= cost.N && r! >= cost.r && p! >= cost.p);
}

/**
 * A hash to verify against when the e-mail address is unknown, so the answer takes as long either
 * way: made with the work factor of new hashes (`log2N`).
 */
const decoys = new Map<number, Promise<string>>();
export function decoyHash(log2N: number): Promise<string> {
  let decoy = decoys.get(log2N);
  if (!decoy) decoys.set(log2N, (decoy = hashPassword(randomBytes(16).toString('hex'), log2N)));
  return decoy;
}
