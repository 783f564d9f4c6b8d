import { randomBytes, randomUUID } from 'node:crypto';

const hex = Array.from({ length: 256 }, (_, i) => (i + 0x100).toString(16).slice(1));
const hex24 = (n: number) => hex[n >>> 16]! + hex[(n >>> 8) & 0xff]! + hex[n & 0xff]!;

/**
 * Request ids (`X-Request-Id`, the error envelope's `request_id`): `req_` and a UUID-shaped
 * value, unique without a random draw per request (docs/performance.md, "Request pipeline and
 * the authenticated read"). The first 20 hex digits are drawn at random per generator (a
 * process has one), the last 12 are a 48-bit counter passed through a keyed permutation (a
 * 4-round Feistel network over two 24-bit halves: a bijection, so distinct counters give
 * distinct ids), so consecutive ids do not plainly show how many requests a process served
 * between two of them (a scramble, not a cipher). After 2^48 ids the prefix is drawn again.
 */
export function requestIdGenerator(): () => string {
  let prefix = '';
  let keys = new Uint32Array(4);
  let counter = 0;
  const counterMax = 2 ** 48;
  const reseed = () => {
    prefix = `req_${randomUUID().slice(0, 24)}`;
    keys = new Uint32Array(randomBytes(16).buffer);
    counter = 0;
  };
  reseed();
  const round = (half: number, key: number) => (Math.imul(half ^ key, 0x9e3779b1) >>> 8) & 0xffffff;
  return () => {
    if (counter >= counterMax) reseed();
    let hi = Math.floor(counter / 0x1000000);
    let lo = counter % 0x1000000;
    counter++;
    for (let i = 0; i < 4; i++) {
      const next = hi ^ round(lo, keys[i]!);
      hi = lo;
      lo = next;
    }
    return prefix + hex24(hi) + hex24(lo);
  };
}
