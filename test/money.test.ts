import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { amountWholeMax, formatAmount, scaleMax } from '../src/money/amounts.js';
// The API's reading of an amount: the ledger's parser, its AmountError answered as invalid_request.
import { parseAmount } from '../src/api-errors.js';
import { ApiError } from '../src/platform/errors.js';
import { malformedAmounts } from './support/fixtures.js';

const refused = (value: string, scale: number) =>
  assert.throws(
    () => parseAmount(value, scale),
    (err: unknown) => err instanceof ApiError && err.code === 'invalid_request',
    `${JSON.stringify(value)} at scale ${scale}`,
  );

test('parseAmount reads decimal strings into minor units', () => {
  assert.equal(parseAmount('1', 6), 1_000_000n);
  assert.equal(parseAmount('1.5', 6), 1_500_000n);
  assert.equal(parseAmount('0.000001', 6), 1n);
  assert.equal(parseAmount('12.34', 2), 1234n);
  assert.equal(parseAmount('7.10', 2), 710n);
  assert.equal(parseAmount('0', 2), 0n);
  assert.equal(parseAmount('0.00', 2), 0n);
  assert.equal(parseAmount('42', 0), 42n);
  assert.equal(parseAmount('0.002', 18), 2_000_000_000_000_000n);
});

test('parseAmount accepts extra places only when they are zeros', () => {
  assert.equal(parseAmount('1.500', 2), 150n);
  assert.equal(parseAmount('3.0', 0), 3n);
  assert.equal(parseAmount('1.2300000000', 2), 123n);
  refused('1.001', 2);
  refused('0.5', 0);
  refused('0.0000001', 6);
});

test('parseAmount refuses anything but digits with an optional fraction', () => {
  for (const bad of malformedAmounts) {
    refused(bad, 6);
  }
  assert.throws(() => parseAmount(12 as unknown as string, 2), ApiError);
});

test('parseAmount names the field and refuses amounts beyond the bound', () => {
  assert.throws(() => parseAmount('x', 2, 'withdrawal_fee'), /withdrawal_fee/);
  assert.equal(parseAmount(amountWholeMax.toString(), 0), amountWholeMax);
  refused((amountWholeMax + 1n).toString(), 0);
  refused('9'.repeat(200), 0);
});

test('a bad scale is a programmer error', () => {
  assert.throws(
    () => parseAmount('1', -1),
    (err: unknown) => !(err instanceof ApiError),
  );
  assert.throws(
    () => parseAmount('1', 1.5),
    (err: unknown) => !(err instanceof ApiError),
  );
  assert.throws(
    () => formatAmount(1n, scaleMax + 1),
    (err: unknown) => !(err instanceof ApiError),
  );
});

test('formatAmount prints exactly the scale places', () => {
  assert.equal(formatAmount(0n, 2), '0.00');
  assert.equal(formatAmount(1n, 6), '0.000001');
  assert.equal(formatAmount(1_500_000n, 6), '1.500000');
  assert.equal(formatAmount(123456n, 2), '1234.56');
  assert.equal(formatAmount(42n, 0), '42');
  assert.equal(formatAmount(0n, 0), '0');
  assert.equal(formatAmount(-5n, 2), '-0.05');
  assert.equal(formatAmount(-12345n, 2), '-123.45');
  assert.equal(formatAmount(10n ** 18n, 18), '1.000000000000000000');
});

const scaleArb = fc.integer({ min: 0, max: scaleMax });
// Whole units within the grammar's 20 integer digits at every scale.
const minorArb = fc.bigInt({ min: 0n, max: amountWholeMax });

test('property: parse(format(x)) is x', () => {
  fc.assert(
    fc.property(minorArb, scaleArb, (minor, scale) => parseAmount(formatAmount(minor, scale), scale) === minor),
    { numRuns: 2000 },
  );
});

test('property: format(parse(s)) is s padded to the scale', () => {
  const decimalArb = scaleArb.chain((scale) =>
    fc.tuple(
      fc.constant(scale),
      fc.stringMatching(/^[1-9]\d{0,19}$|^0$/),
      fc.stringMatching(new RegExp(`^\\d{0,${scale}}$`)),
    ),
  );
  fc.assert(
    fc.property(decimalArb, ([scale, whole, fraction]) => {
      const text = fraction === '' ? whole : `${whole}.${fraction}`;
      const expected = scale === 0 ? whole : `${whole}.${fraction.padEnd(scale, '0')}`;
      return formatAmount(parseAmount(text, scale), scale) === expected;
    }),
    { numRuns: 2000 },
  );
});

test('property: trailing zeros never change the value, other extra places are refused', () => {
  fc.assert(
    fc.property(
      minorArb,
      scaleArb,
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 1, max: 9 }),
      (minor, scale, zeros, digit) => {
        // The grammar allows at most 18 places in all.
        fc.pre(scale + zeros <= scaleMax);
        const text = formatAmount(minor, scale);
        const padded = scale === 0 ? `${text}.${'0'.repeat(zeros)}` : text + '0'.repeat(zeros);
        if (parseAmount(padded, scale) !== minor) return false;
        const extra = (scale === 0 ? `${text}.` : text) + '0'.repeat(zeros - 1) + String(digit);
        try {
          parseAmount(extra, scale);
          return false;
        } catch (err) {
          return err instanceof ApiError && err.code === 'invalid_request';
        }
      },
    ),
    { numRuns: 1000 },
  );
});

test('property: arbitrary strings either parse to a value that formats back equal, or are refused', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 30 }), scaleArb, (text, scale) => {
      let minor: bigint;
      try {
        minor = parseAmount(text, scale);
      } catch (err) {
        return err instanceof ApiError && err.code === 'invalid_request';
      }
      return /^\d+(\.\d+)?$/.test(text) && minor >= 0n && parseAmount(formatAmount(minor, scale), scale) === minor;
    }),
    { numRuns: 2000 },
  );
});
