import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  amountFractionDigitsMax,
  amountIntegerDigitsMax,
  amountLengthMax,
  amountMinorMaxAt,
  formatAmount,
  readAmount,
  scaleMax,
  type AmountProblem,
} from '../src/money/amounts.js';
// The API's reading of an amount: the ledger's parser, its AmountError answered as invalid_request.
import { parseAmount } from '../src/api-errors.js';
import { ApiError } from '../src/platform/errors.js';
import { malformedAmounts } from './support/fixtures.js';

/**
 * The amount grammar (src/money/amounts.ts): integer part "0" or 1 to 20 digits without a leading
 * zero, an optional point and 1 to 18 places, places beyond the scale only as zeros; nothing else.
 */

const problemOf = (value: unknown, scale: number): AmountProblem | 'ok' => {
  const r = readAmount(value, scale);
  return r.ok ? 'ok' : r.problem;
};

test("the issue's cases are refused: leading zeros, a 40-digit integer part, a 61-character amount", () => {
  assert.equal(problemOf('00.1', 6), 'leading_zero');
  assert.equal(problemOf('01', 6), 'leading_zero');
  assert.equal(problemOf('000', 0), 'leading_zero');
  assert.equal(problemOf('1'.repeat(40), 6), 'too_long');
  assert.equal(problemOf('1'.repeat(21), 0), 'too_large');
  assert.equal(problemOf(`1${'0'.repeat(20)}.5`, 2), 'too_large');
  assert.equal(problemOf(`1.${'0'.repeat(59)}`, 6), 'too_long');
  assert.equal(problemOf('0.5', 6), 'ok');
  assert.equal(problemOf('0', 6), 'ok');
  assert.equal(problemOf('10', 6), 'ok');
});

test('the bounds: 20 integer digits, 18 places, 39 characters', () => {
  assert.equal(amountIntegerDigitsMax, 20);
  assert.equal(amountFractionDigitsMax, scaleMax);
  assert.equal(amountLengthMax, 39);
  const longest = `${'9'.repeat(20)}.${'9'.repeat(18)}`;
  assert.equal(longest.length, amountLengthMax);
  assert.equal(parseAmount(longest, 18), amountMinorMaxAt(18));
  assert.equal(parseAmount('9'.repeat(20), 0), amountMinorMaxAt(0));
  assert.equal(problemOf(`1.${'0'.repeat(19)}`, 2), 'too_many_places');
  // The ledger's numeric(78,0) columns keep 40 digits of headroom over the largest amount.
  assert.ok(amountMinorMaxAt(scaleMax).toString().length <= 38);
});

test('places beyond the scale: zeros accepted, anything else refused, never rounded', () => {
  assert.equal(parseAmount('1.500000', 2), 150n);
  assert.equal(parseAmount('1.0', 0), 1n);
  assert.equal(problemOf('1.501', 2), 'too_many_places');
  assert.equal(problemOf('1.5000001', 2), 'too_many_places');
  assert.equal(problemOf('0.5', 0), 'too_many_places');
});

test('no sign, exponent, spaces, separators or half-written numbers', () => {
  for (const bad of [...malformedAmounts, '１', '1\u0000', '−1']) {
    assert.equal(problemOf(bad, 6), 'malformed', JSON.stringify(bad));
  }
  assert.equal(problemOf(12, 2), 'not_a_string');
  assert.equal(problemOf(null, 2), 'not_a_string');
});

test('parseAmount throws invalid_request naming the field; a bad scale is a programmer error', () => {
  assert.throws(
    () => parseAmount('00.1', 2, 'withdrawal_fee'),
    (err: unknown) =>
      err instanceof ApiError &&
      err.code === 'invalid_request' &&
      /withdrawal_fee/.test(err.message) &&
      /zero/.test(err.message),
  );
  assert.throws(
    () => readAmount('1', scaleMax + 1),
    (err: unknown) => !(err instanceof ApiError),
  );
});

const scaleArb = fc.integer({ min: 0, max: scaleMax });
/** Text in the grammar, built from its parts. */
const grammarArb = fc
  .tuple(
    fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,19}$/)),
    fc.option(fc.stringMatching(/^[0-9]{1,18}$/), { nil: undefined }),
  )
  .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`));

test('property: the grammar as a regular expression agrees with readAmount on any text', () => {
  const grammar = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,18})?$/;
  const anyText = fc.oneof(
    fc.string({ maxLength: 45 }),
    grammarArb,
    fc.stringMatching(/^[0-9]{0,25}(\.[0-9]{0,22})?$/),
  );
  fc.assert(
    fc.property(anyText, (text) => {
      // At scale 18 no place is beyond the scale: the grammar alone decides.
      const r = readAmount(text, scaleMax);
      return r.ok === grammar.test(text);
    }),
    { numRuns: 3000 },
  );
});

test('property: an accepted amount formats back to itself padded to the scale, and never exceeds the bound', () => {
  fc.assert(
    fc.property(grammarArb, scaleArb, (text, scale) => {
      const r = readAmount(text, scale);
      const [whole, fraction = ''] = text.split('.');
      const tailIsZero = /^0*$/.test(fraction.slice(scale));
      if (!r.ok) return r.problem === 'too_many_places' && !tailIsZero;
      if (!tailIsZero || r.minor > amountMinorMaxAt(scale)) return false;
      const kept = fraction.slice(0, scale).padEnd(scale, '0');
      return formatAmount(r.minor, scale) === (scale === 0 ? whole : `${whole}.${kept}`);
    }),
    { numRuns: 3000 },
  );
});

test('property: a leading zero, a sign, an exponent or surrounding space makes any valid amount invalid', () => {
  const spoil = fc.constantFrom(
    (t: string) => `0${t}`,
    (t: string) => `-${t}`,
    (t: string) => `+${t}`,
    (t: string) => `${t}e1`,
    (t: string) => ` ${t}`,
    (t: string) => `${t} `,
    (t: string) => `${t}.`,
    (t: string) => `.${t}`,
  );
  fc.assert(
    fc.property(grammarArb, spoil, scaleArb, (text, f, scale) => {
      const spoilt = f(text);
      // "0" + "0.5" is "00.5" (refused) but "0" + "5" is "05" (refused too): always a refusal.
      return !readAmount(spoilt, scale).ok;
    }),
    { numRuns: 2000 },
  );
});
