/**
 * Remittance's pure rules, without a server: validators, field contracts, fingerprints, the
 * settlement calendar and the rate helpers. Property tests (fast-check) run each property a
 * hundred times or more. Corridor policy: remittance-corridors-rules.test.ts; pricing, limits and
 * posting rules: remittance-orders-rules.test.ts; the order state machine: remittance-orders-state.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { composeIBAN } from 'ibantools';
import {
  abaCheckDigit,
  checkAbaRouting,
  checkBic,
  checkIban,
  checkSortCode,
  normaliseAlnumUpper,
  normaliseIban,
  ibanLengthOf,
} from '../src/modules/remittance/corridors/validators.js';
import {
  contractProblems,
  fieldValueLengthMax,
  readFields,
  refreshKeys,
  type FieldSpec,
} from '../src/modules/remittance/corridors/contracts.js';
import { accountFingerprint, holderFingerprint, holderNameKey } from '../src/modules/remittance/payees/fingerprints.js';
import { contractRoutingTypes, corridorRefusal } from '../src/modules/remittance/corridors/rules.js';
import { defaultCorridors, defaultRestrictedJurisdictions } from '../src/db/migrations/016_remittance.js';
import {
  easterSunday,
  isHoliday,
  isSettlementDay,
  nextBusinessDay,
} from '../src/upstreams/remittance/settlement-calendar.js';
import { calendarFor, simulatedNameCheck } from '../src/upstreams/remittance/simulator.js';
import { convert, convertBack, rateAfterSpread, ratioOf } from '../src/money/conversion.js';
import { contractOf, daysFrom, simulatedMarketOn } from './support/fixtures.js';

const runs = { numRuns: 200 };
const sepa = contractOf('DE', 'SEPA');
const fps = contractOf('GB', 'FPS');
const ach = contractOf('US', 'ACH');
const swift = contractOf('US', 'SWIFT');

const person = {
  first_name: 'Anna',
  last_name: 'Müller',
  'address.country': 'DE',
  'address.city': 'Berlin',
  'address.street_address': 'Unter den Linden 1',
  'address.postal_code': '10117',
};
const digits = (n: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
const deIban = digits(18).map((bban) => composeIBAN({ countryCode: 'DE', bban })!);
const abaPrefixes = [
  '01',
  '02',
  '03',
  '04',
  '05',
  '06',
  '07',
  '08',
  '09',
  '10',
  '11',
  '12',
  '21',
  '22',
  '26',
  '31',
  '32',
  '61',
  '67',
  '72',
  '80',
];
const validAba = fc
  .tuple(fc.constantFrom(...abaPrefixes), digits(6))
  .map(([p, rest]) => `${p}${rest}${abaCheckDigit(p + rest)}`);

describe('IBAN', () => {
  it('accepts real IBANs of many countries', () => {
    for (const iban of [
      'DE89370400440532013000',
      'FR1420041010050500013M02606',
      'NL91ABNA0417164300',
      'ES9121000418450200051332',
      'IT60X0542811101000000123456',
      'GB29NWBK60161331926819',
      'BE68539007547034',
      'CH9300762011623852957',
    ]) {
      assert.equal(checkIban(iban), undefined, iban);
    }
  });
  it('gives iban_length for a wrong length, iban_checksum for a wrong mod-97, pattern for the rest', () => {
    assert.equal(checkIban('DE8937040044053201300'), 'iban_length');
    assert.equal(checkIban('DE893704004405320130000'), 'iban_length');
    assert.equal(checkIban('DE89370400440532013001'), 'iban_checksum');
    assert.equal(checkIban('DE00370400440532013000'), 'iban_checksum');
    assert.equal(checkIban('XX89370400440532013000'), 'pattern', 'unknown country');
    assert.equal(checkIban('DE89A70400440532013000'), 'pattern', 'BBAN format (DE is all digits)');
    assert.equal(checkIban('DE89370400440532013000', 'FR'), 'pattern', 'not of the corridor country');
    assert.equal(checkIban(''), 'pattern');
    assert.equal(ibanLengthOf('DE'), 22);
    assert.equal(ibanLengthOf('US'), undefined);
  });
  it('property: every composed German IBAN is valid, and its normalisation is idempotent', () => {
    fc.assert(
      fc.property(deIban, (iban) => {
        assert.equal(checkIban(iban, 'DE'), undefined);
        assert.equal(normaliseIban(normaliseIban(iban)), normaliseIban(iban));
      }),
      runs,
    );
  });
  it('property: spaces, hyphens and lower case never change the normalised IBAN', () => {
    const formatted = fc
      .tuple(
        deIban,
        fc.array(fc.constantFrom(' ', '-', '  ', '\u00a0'), { minLength: 22, maxLength: 22 }),
        fc.boolean(),
      )
      .map(([iban, seps, lower]) => {
        const text = [...iban].map((c, i) => (i % 4 === 3 ? c + seps[i] : c)).join('');
        return { iban, text: lower ? text.toLowerCase() : text };
      });
    fc.assert(
      fc.property(formatted, ({ iban, text }) => {
        assert.equal(normaliseIban(text), iban);
        assert.equal(checkIban(normaliseIban(text), 'DE'), undefined);
      }),
      runs,
    );
  });
  it('property: any single changed digit is caught by mod-97', () => {
    fc.assert(
      fc.property(deIban, fc.integer({ min: 4, max: 21 }), fc.integer({ min: 1, max: 9 }), (iban, pos, delta) => {
        const d = (Number(iban[pos]) + delta) % 10;
        const broken = iban.slice(0, pos) + d + iban.slice(pos + 1);
        assert.equal(checkIban(broken), 'iban_checksum');
      }),
      runs,
    );
  });
  it('property: any two swapped different adjacent digits are caught', () => {
    fc.assert(
      fc.property(deIban, fc.integer({ min: 4, max: 20 }), (iban, pos) => {
        fc.pre(iban[pos] !== iban[pos + 1]);
        const swapped = iban.slice(0, pos) + iban[pos + 1] + iban[pos] + iban.slice(pos + 2);
        assert.equal(checkIban(swapped), 'iban_checksum');
      }),
      runs,
    );
  });
});

describe('BIC, sort code, ABA routing number', () => {
  it('BIC: 8 or 11 characters with a real country', () => {
    for (const bic of ['DEUTDEFF', 'DEUTDEFF500', 'CHASUS33', 'NWBKGB2L', 'BNPAFRPPXXX'])
      assert.equal(checkBic(bic), undefined, bic);
    for (const bic of ['DEUTDEF', 'DEUTDEFF5', 'DEUTXXFF', '1EUTDEFF', 'DEUTDEFF50', ''])
      assert.equal(checkBic(bic), 'pattern', bic);
    assert.equal(checkBic('DEUTDEFF', 'US'), 'pattern', 'another country than the corridor');
  });
  it('sort code: six digits', () => {
    assert.equal(checkSortCode('040004'), undefined);
    for (const s of ['04000', '0400045', '04-00-04', 'ABCDEF']) assert.equal(checkSortCode(s), 'pattern', s);
  });
  it('ABA: real routing numbers pass, checksum and prefix are enforced', () => {
    for (const rtn of ['021000021', '011000015', '026009593', '121000358', '111000025', '322271627'])
      assert.equal(checkAbaRouting(rtn), undefined, rtn);
    for (const rtn of ['021000022', '02100002', '0210000211', '131000025', '991000021', 'A21000021'])
      assert.equal(checkAbaRouting(rtn), 'pattern', rtn);
  });
  it('property: the check digit makes a valid number; any single changed digit breaks it', () => {
    fc.assert(
      fc.property(validAba, fc.integer({ min: 2, max: 8 }), fc.integer({ min: 1, max: 9 }), (rtn, pos, delta) => {
        assert.equal(checkAbaRouting(rtn), undefined);
        const broken = rtn.slice(0, pos) + ((Number(rtn[pos]) + delta) % 10) + rtn.slice(pos + 1);
        assert.equal(checkAbaRouting(broken), 'pattern');
      }),
      runs,
    );
  });
  it('property: alnum_upper drops hyphens and spaces and upper-cases, idempotently', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'abcXYZ019- '.split('')), maxLength: 40 }), (s) => {
        const n = normaliseAlnumUpper(s);
        assert.match(n, /^[A-Z0-9]*$/);
        assert.equal(normaliseAlnumUpper(n), n);
        assert.equal(n, s.replace(/[- ]/g, '').toUpperCase());
      }),
      runs,
    );
  });
});

describe('field contracts', () => {
  const ok = { ...person, 'bank_details.iban': 'DE89 3704 0044 0532 0130 00' };
  it('the default contracts are well-formed and every default corridor is usable', () => {
    for (const c of defaultCorridors) {
      for (const entity of ['INDIVIDUAL', 'COMPANY'] as const) {
        const contract = c.contracts[entity] as unknown as FieldSpec[];
        assert.deepEqual(contractProblems(contract), [], `${c.country} ${c.clearing_system} ${entity}`);
        assert.equal(
          corridorRefusal(
            {
              enabled: true,
              restrictedJurisdictions: defaultRestrictedJurisdictions,
              confirmableRoutingTypes: c.confirmable_routing_types,
            },
            contract,
          ),
          undefined,
        );
      }
    }
    assert.equal(
      new Set(defaultCorridors.map((c) => `${c.country}/${c.currency}/${c.payment_method}/${c.clearing_system}`)).size,
      8,
    );
  });
  it('reads a valid SEPA payee: normalised values, original text kept, unknown keys dropped', () => {
    const r = readFields(sepa, { ...ok, nickname_extra: 'x', 'bank_details.unknown': 'y' }, { country: 'DE' });
    assert.deepEqual(r.problems, []);
    assert.equal(r.values['bank_details.iban'], 'DE89370400440532013000');
    assert.equal(r.original['bank_details.iban'], 'DE89 3704 0044 0532 0130 00');
    assert.equal(r.values['address.postal_code'], '10117');
    assert.ok(!('nickname_extra' in r.values) && !('bank_details.unknown' in r.original));
  });
  it(
    'answers every reason: required, too_long, pattern, not_in_enum, iban_length, iban_checksum, ' +
      'account_identifier_required',
    () => {
      const problems = (contract: FieldSpec[], fields: Record<string, unknown>, country = 'DE') =>
        readFields(contract, fields, { country }).problems;
      /** `valid` passes; with one field changed as each row says, it is refused for that field alone. */
      const refusesEach = (
        contract: FieldSpec[],
        valid: Record<string, unknown>,
        country: string,
        changed: [key: string, value: unknown, reason: string][],
      ) => {
        assert.deepEqual(problems(contract, valid, country), []);
        for (const [key, value, reason] of changed)
          assert.deepEqual(
            problems(contract, { ...valid, [key]: value }, country),
            [{ key, reason }],
            `${key}: ${String(value)}`,
          );
      };
      refusesEach(sepa, ok, 'DE', [
        ['first_name', '  ', 'required'],
        ['first_name', 'A'.repeat(51), 'too_long'],
        ['address.postal_code', '1!', 'pattern'],
        ['bank_details.iban', 'DE8937040044053201300', 'iban_length'],
        ['bank_details.iban', 'DE89370400440532013001', 'iban_checksum'],
        ['bank_details.iban', '', 'account_identifier_required'],
        ['bank_details.swift_code', 'DEUTXXFF', 'pattern'],
        ['first_name', 42, 'pattern'], // not a string
      ]);
      /** A payee in `country` paid by a local routing code and an account number. */
      const localAccount = (
        country: string,
        postalCode: string,
        [routingType, routingCode]: [string, string],
        accountNumber: string,
        more: Record<string, string> = {},
      ) => ({
        ...person,
        'address.country': country,
        'address.postal_code': postalCode,
        'bank_details.routing_code_type1': routingType,
        'bank_details.routing_code_value1': routingCode,
        'bank_details.account_number': accountNumber,
        ...more,
      });
      const gb = localAccount('GB', 'sw1a 1aa', ['sort_code', '04-00-04'], '12345678');
      refusesEach(fps, gb, 'GB', [
        ['bank_details.routing_code_type1', 'iban', 'not_in_enum'],
        ['bank_details.routing_code_value1', '04-00-4', 'pattern'],
        ['bank_details.account_number', '1234567A', 'pattern'],
      ]);
      const us = localAccount('US', '10001-1234', ['aba', '021000021'], '000123456789', {
        'address.state': 'ny',
        'bank_details.account_type': 'checking',
      });
      refusesEach(ach, us, 'US', [
        ['bank_details.routing_code_value1', '021000022', 'pattern'],
        ['bank_details.account_type', 'Checking', 'not_in_enum'],
      ]);
      const sw = {
        ...us,
        'bank_details.swift_code': 'chas us 33',
        'bank_details.bank_name': 'Chase',
        'bank_details.bank_address': 'New York',
      };
      refusesEach(swift, sw, 'US', [
        ['bank_details.account_number', undefined, 'account_identifier_required'],
        ['bank_details.swift_code', 'DEUTDEFF', 'pattern'],
      ]);
      assert.deepEqual(problems(sepa, {}), [
        ...['first_name', 'last_name'].map((key) => ({ key, reason: 'required' })),
        { key: 'bank_details.iban', reason: 'account_identifier_required' },
        ...['address.country', 'address.city', 'address.street_address', 'address.postal_code'].map((key) => ({
          key,
          reason: 'required',
        })),
      ]);
    },
  );
  it('truncates each value at 256 characters before normalising and checking', () => {
    const long = 'x'.repeat(300);
    const r = readFields(sepa, { ...ok, 'bank_details.bank_name': long }, { country: 'DE' });
    assert.equal(r.original['bank_details.bank_name']!.length, fieldValueLengthMax);
    assert.deepEqual(r.problems, [{ key: 'bank_details.bank_name', reason: 'too_long' }], '256 > 140');
    const emoji = '😀'.repeat(300);
    assert.equal(
      Array.from(
        readFields(sepa, { ...ok, 'address.street_address': emoji }, { country: 'DE' }).original[
          'address.street_address'
        ]!,
      ).length,
      256,
    );
  });
  it('property: unknown keys never matter; values of any text never throw', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ maxLength: 20 }),
          fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null)),
        ),
        (extra) => {
          const withExtra = { ...extra, ...ok };
          const r = readFields(sepa, withExtra, { country: 'DE' });
          for (const key of Object.keys(r.values)) assert.ok(sepa.some((s) => s.key === key));
          for (const p of r.problems) assert.ok(sepa.some((s) => s.key === p.key));
        },
      ),
      runs,
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...sepa.map((s) => s.key)), fc.string({ maxLength: 300 })),
        (fields) => {
          readFields(sepa, fields, { country: 'DE' });
        },
      ),
      runs,
    );
  });
  it('marks the fields whose change refreshes the form; routing types come from the contract', () => {
    assert.deepEqual([...refreshKeys(fps)], ['bank_details.routing_code_type1']);
    assert.deepEqual(contractRoutingTypes(fps), ['sort_code']);
    assert.deepEqual(contractRoutingTypes(swift).sort(), ['aba', 'bic']);
    assert.deepEqual(contractRoutingTypes(sepa), ['bic']);
  });
  it('refuses ill-formed contracts', () => {
    const bad = [
      { key: 'Bad Key', label: 'x', type: 'text', required: true, max_length: 10 },
      { key: 'a', label: 'x', type: 'enum', required: true, max_length: 300 },
      { key: 'b', label: 'x', type: 'text', required: true, max_length: 10, pattern: '[a-z]+' },
      { key: 'c', label: 'x', type: 'routing_code', required: true, max_length: 10 },
      { key: 'c', label: 'x', type: 'text', required: true, max_length: 10, pattern: '^(' },
    ] as unknown as FieldSpec[];
    const reasons = contractProblems(bad).map((p) => `${p.key}:${p.reason}`);
    assert.deepEqual(reasons, [
      'fields[0].key:pattern',
      'fields[1].max_length:pattern',
      'fields[1].enum:required',
      'fields[2].pattern:pattern',
      'fields[3].type_field:required',
      'fields[4].key:duplicate',
      'fields[4].pattern:pattern',
      'fields:account_identifier_required',
    ]);
  });
});

describe('fingerprints', () => {
  const seg = { country: 'DE', currency: 'EUR', paymentMethod: 'LOCAL', clearingSystem: 'SEPA' };
  it('property: the account fingerprint ignores formatting and the order of parts', () => {
    fc.assert(
      fc.property(deIban, fc.boolean(), (iban, lower) => {
        const text = lower ? iban.toLowerCase().replace(/(.{4})/g, '$1 ') : iban.replace(/(.{4})/g, '$1-');
        const a = accountFingerprint(seg, [['bank_details.iban', iban]]);
        assert.equal(accountFingerprint(seg, [['bank_details.iban', normaliseIban(text)]]), a);
        assert.match(a, /^[0-9a-f]{64}$/);
      }),
      runs,
    );
    fc.assert(
      fc.property(digits(6), digits(8), (sort, account) => {
        const gb = { country: 'GB', currency: 'GBP', paymentMethod: 'LOCAL', clearingSystem: 'FPS' };
        assert.equal(
          accountFingerprint(gb, [
            ['b', sort],
            ['a', account],
          ]),
          accountFingerprint(gb, [
            ['a', account],
            ['b', sort],
          ]),
        );
      }),
      runs,
    );
  });
  it('property: another account, another segment, or another clearing-system case is another payee', () => {
    fc.assert(
      fc.property(deIban, deIban, (a, b) => {
        fc.pre(a !== b);
        assert.notEqual(
          accountFingerprint(seg, [['bank_details.iban', a]]),
          accountFingerprint(seg, [['bank_details.iban', b]]),
        );
        assert.notEqual(
          accountFingerprint(seg, [['bank_details.iban', a]]),
          accountFingerprint({ ...seg, clearingSystem: 'sepa' }, [['bank_details.iban', a]]),
        );
        assert.notEqual(
          accountFingerprint(seg, [['bank_details.iban', a]]),
          accountFingerprint({ ...seg, paymentMethod: 'SWIFT' }, [['bank_details.iban', a]]),
        );
      }),
      runs,
    );
    // Length-prefixed: moving a character between parts changes the fingerprint.
    assert.notEqual(
      accountFingerprint(seg, [
        ['k', 'ab'],
        ['l', 'c'],
      ]),
      accountFingerprint(seg, [
        ['k', 'a'],
        ['l', 'bc'],
      ]),
    );
    assert.throws(() => accountFingerprint(seg, []));
  });
  it('holder names: accents, case, punctuation, spacing and word order do not matter; spelling does', () => {
    assert.equal(holderNameKey('Müller, Anna'), 'ANNA MULLER');
    assert.equal(holderFingerprint('  anna   MÜLLER '), holderFingerprint('Müller, Anna'));
    assert.equal(holderFingerprint('Jean-Luc Picard'), holderFingerprint('PICARD Jean Luc'));
    assert.equal(holderNameKey('Straße'), 'STRASSE');
    assert.notEqual(holderFingerprint('Anna Muller'), holderFingerprint('Anna Mueller'));
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[A-Za-zÀ-ÿ]{1,10}$/), { minLength: 1, maxLength: 4 }),
        fc.constantFrom(' ', ', ', '  ', '-'),
        (words, sep) => {
          const name = words.join(sep);
          assert.equal(holderFingerprint(name), holderFingerprint([...words].reverse().join(' ').toUpperCase()));
          assert.equal(holderFingerprint(name), holderFingerprint(name.toLowerCase()));
        },
      ),
      runs,
    );
  });
});

describe('settlement calendar (simulated provider)', () => {
  it('knows Easter and the holidays of EUR, GBP and USD', () => {
    assert.deepEqual(
      ['2024', '2025', '2026', '2027'].map((y) => easterSunday(Number(y)).toISOString().slice(0, 10)),
      ['2024-03-31', '2025-04-20', '2026-04-05', '2027-03-28'],
    );
    for (const d of ['2025-01-01', '2025-04-18', '2025-04-21', '2025-05-01', '2025-12-25', '2025-12-26'])
      assert.ok(isHoliday('EUR', d), `EUR ${d}`);
    for (const d of ['2025-05-05', '2025-05-26', '2025-08-25', '2026-12-28', '2027-12-27', '2027-12-28'])
      assert.ok(isHoliday('GBP', d), `GBP ${d}`);
    for (const d of [
      '2025-01-20',
      '2025-02-17',
      '2025-05-26',
      '2025-06-19',
      '2025-07-04',
      '2025-09-01',
      '2025-10-13',
      '2025-11-11',
      '2025-11-27',
      '2023-01-02',
    ])
      assert.ok(isHoliday('USD', d), `USD ${d}`);
    assert.ok(!isHoliday('EUR', '2025-05-26'));
    assert.ok(!isSettlementDay('EUR', '2025-01-04'), 'Saturday');
    assert.ok(isSettlementDay('EUR', '2025-01-03'));
    assert.equal(nextBusinessDay(new Date('2025-01-03T10:00:00Z')), '2025-01-06');
  });
  it('answers the coming week with cut-off, weekends and holidays; same currency has no dates', () => {
    const c = calendarFor(new Date('2025-12-23T15:00:00Z'), 'express', 'EUR', 'USD');
    // Tuesday 23 (past the cut-off) to Monday 29 December: Christmas, Boxing Day and the weekend are not valid.
    assert.deepEqual(c.dates, daysFrom('2025-12-23', [false, true, false, false, false, false, true]));
    assert.equal(c.earliestValid, '2025-12-24');
    assert.equal(c.sameCurrency, false);
    const same = calendarFor(new Date('2025-12-24T09:00:00Z'), 'pobo', 'EUR', 'EUR');
    assert.deepEqual(same.dates, []);
    assert.equal(same.earliestValid, '2025-12-24');
  });
  it('checks names the way a bank directory does', () => {
    assert.deepEqual(simulatedNameCheck('Max Mustermann', 'max MUSTERMANN'), { kind: 'match' });
    assert.deepEqual(simulatedNameCheck('Max Mustermann', 'Max Musterman'), {
      kind: 'close_match',
      suggestedName: 'Max Mustermann',
    });
    assert.deepEqual(simulatedNameCheck('Max Mustermann', 'Max J Mustermann'), {
      kind: 'close_match',
      suggestedName: 'Max Mustermann',
    });
    assert.deepEqual(simulatedNameCheck('Max Mustermann', 'Erika Musterfrau'), { kind: 'no_match' });
  });
});

describe('the rate service', () => {
  it('converts with exact rationals, rounding as asked', () => {
    assert.equal(convert(1_000_000n, 6, 2, '0.925925925925', 'down'), 92n);
    assert.equal(convert(1_000_000n, 6, 2, '0.925925925925', 'up'), 93n);
    assert.equal(convertBack(100n, 6, 2, '0.5', 'up'), 2_000_000n);
    assert.equal(rateAfterSpread('1', 30), '0.9970000000');
    assert.throws(() => ratioOf('1e5'));
    assert.throws(() => rateAfterSpread('1', 10_001));
  });
  it('property: convert down then back up never gains', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 1, max: 10 ** 9 }), (amount, micros) => {
        const rate = `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')}`;
        fc.pre(ratioOf(rate).num > 0n);
        const out = convert(amount, 6, 2, rate, 'down');
        assert.ok(convertBack(out, 6, 2, rate, 'down') <= amount);
      }),
      runs,
    );
  });
  it('the simulated market is deterministic and knows its codes', async () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const market = simulatedMarketOn(() => at);
    const call = { merchantId: 'm', environment: 'sandbox' as const };
    const a = await market.mid(call, 'USDT', 'EUR');
    assert.equal(a.kind, 'rate');
    assert.equal((a as { rate: string }).rate, '0.925925925925');
    assert.equal(((await market.mid(call, 'EUR', 'GBP')) as { rate: string }).rate, '0.850393700787');
    assert.equal(((await market.mid(call, 'USD', 'USD')) as { rate: string }).rate, '1');
    assert.equal((await market.mid(call, 'USDT', 'JPY')).kind, 'unavailable');
  });
});
