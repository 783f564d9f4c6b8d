import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EmvcoError, crc16, decodeEmvco, parseTlv, payloadLengthMax } from '../src/modules/qrpay/emvco.js';
import { schemeOf } from '../src/modules/qrpay/schemes.js';
import { amountToPay, qrAmountText } from '../src/modules/qrpay/decode.js';
import { ApiError } from '../src/platform/errors.js';
import { decideOnCall, decideOnQuery, publicStatus, recheckDelayMs } from '../src/modules/qrpay/state.js';

/**
 * A small EMVCo MPM encoder written independently of the decoder: TLV with character lengths and
 * a bitwise CRC-16/CCITT-FALSE over the UTF-8 bytes up to and including "6304".
 */
type Field = [string, string | Field[]];

function tlv([id, value]: Field): string {
  const v = typeof value === 'string' ? value : value.map(tlv).join('');
  const len = Array.from(v).length;
  assert.ok(len > 0 && len < 100, `field ${id} length ${len}`);
  return `${id}${String(len).padStart(2, '0')}${v}`;
}

function ccittFalse(text: string): string {
  let crc = 0xffff;
  for (const b of new TextEncoder().encode(text)) {
    for (let i = 7; i >= 0; i--) {
      const bit = ((b >> i) & 1) ^ ((crc >> 15) & 1);
      crc = ((crc << 1) & 0xffff) ^ (bit ? 0x1021 : 0);
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

function encodeEmv(fields: Field[], crc?: string): string {
  const body = `${fields.map(tlv).join('')}6304`;
  return body + (crc ?? ccittFalse(body));
}

const payNowFields = (extra: { amount?: string; name?: string; uen?: string } = {}): Field[] => [
  ['00', '01'],
  ['01', extra.amount ? '12' : '11'],
  [
    '26',
    [
      ['00', 'SG.PAYNOW'],
      ['01', '2'],
      ['02', extra.uen ?? '201403121W'],
      ['03', '1'],
      ['04', '20301231'],
    ],
  ],
  [
    '51',
    [
      ['00', 'SG.SGQR'],
      ['01', '180307A1B2C3'],
      ['02', '01.0001'],
      ['03', '310001'],
      ['04', '01'],
      ['05', '0001'],
      ['06', '0001'],
      ['07', '20180307'],
    ],
  ],
  ['52', '5812'],
  ['53', '702'],
  ...(extra.amount ? [['54', extra.amount] as Field] : []),
  ['58', 'SG'],
  ['59', extra.name ?? 'KOPI CORNER PTE LTD'],
  ['60', 'Singapore'],
  [
    '62',
    [
      ['01', 'INV-2024-0042'],
      ['05', 'ORDER42'],
    ],
  ],
];

describe('EMVCo merchant-presented QR decoding', () => {
  it('computes CRC-16/CCITT-FALSE (check value 29B1 for "123456789")', () => {
    assert.equal(crc16('123456789'), '29B1');
    assert.equal(ccittFalse('123456789'), '29B1');
    assert.equal(crc16(''), 'FFFF');
  });

  it('decodes the EMVCo specification example, non-ASCII language template included', () => {
    const sample =
      '00020101021229300012D156000000000510A93FO3230Q31280012D15600000001030812345678520441115802CN5914BEST ' +
      'TRANSPORT6007BEIJING64200002ZH0104最佳运输0202北京540523.7253031565502016233030412340603***0708A60086670902ME' +
      '91320016A0112233449988770708123456786304A13A';
    const qr = decodeEmvco(sample);
    assert.equal(qr.merchantName, 'BEST TRANSPORT');
    assert.equal(qr.merchantCity, 'BEIJING');
    assert.equal(qr.country, 'CN');
    assert.equal(qr.currency, 'CNY');
    assert.equal(qr.amount, '23.72');
    assert.equal(qr.pointOfInitiation, 'dynamic');
    assert.equal(qr.merchantCategoryCode, '4111');
    assert.equal(schemeOf(qr), undefined, 'a scheme we do not serve');
  });

  it('decodes a PayNow SGQR with nested templates 26, 51 and 62', () => {
    const qr = decodeEmvco(encodeEmv(payNowFields()));
    assert.equal(qr.merchantName, 'KOPI CORNER PTE LTD');
    assert.equal(qr.merchantCity, 'Singapore');
    assert.equal(qr.country, 'SG');
    assert.equal(qr.currency, 'SGD');
    assert.equal(qr.amount, null);
    assert.equal(qr.pointOfInitiation, 'static');
    assert.equal(qr.reference, 'ORDER42');
    assert.deepEqual(
      qr.merchantAccounts.map((a) => a.guid),
      ['SG.PAYNOW', 'SG.SGQR'],
    );
    const found = schemeOf(qr)!;
    assert.equal(found.scheme.id, 'sg_paynow', 'the rail, not the SGQR container');
    assert.equal(found.account.account, '2|201403121W|1');
  });

  it('reads the amount of a dynamic code and recognises NETS, FPS and DuitNow GUIDs', () => {
    const paynow = decodeEmvco(encodeEmv(payNowFields({ amount: '12.50' })));
    assert.equal(paynow.amount, '12.50');
    assert.equal(paynow.pointOfInitiation, 'dynamic');

    const nets = decodeEmvco(
      encodeEmv([
        ['00', '01'],
        ['01', '11'],
        [
          '33',
          [
            ['00', 'SG.COM.NETS'],
            ['01', '231033900011'],
            ['02', '11137104400'],
            ['03', '00000001'],
            ['99', '96A1FB2E'],
          ],
        ],
        [
          '51',
          [
            ['00', 'SG.SGQR'],
            ['01', '1912261D39A7'],
          ],
        ],
        ['52', '5499'],
        ['53', '702'],
        ['58', 'SG'],
        ['59', 'HAWKER STALL 12'],
        ['60', 'SINGAPORE'],
      ]),
    );
    assert.equal(schemeOf(nets)?.scheme.id, 'sg_nets');

    const fps = decodeEmvco(
      encodeEmv([
        ['00', '01'],
        ['01', '12'],
        [
          '26',
          [
            ['00', 'hk.com.hkicl'],
            ['02', '4957013'],
            ['04', 'MERCHANT@BANK'],
          ],
        ],
        ['52', '0000'],
        ['53', '344'],
        ['54', '88.8'],
        ['58', 'HK'],
        ['59', 'DIM SUM HOUSE'],
        ['60', 'HONG KONG'],
      ]),
    );
    assert.equal(schemeOf(fps)?.scheme.id, 'hk_fps', 'GUIDs compare case-insensitively');
    assert.equal(fps.currency, 'HKD');
    assert.equal(fps.amount, '88.8');

    const duitnow = decodeEmvco(
      encodeEmv([
        ['00', '01'],
        ['01', '11'],
        [
          '26',
          [
            ['00', 'COM.DUITNOW'],
            ['01', '890053'],
            ['02', '0000000000123456'],
          ],
        ],
        ['52', '5411'],
        ['53', '458'],
        ['58', 'MY'],
        ['59', 'KEDAI RUNCIT'],
        ['60', 'KUALA LUMPUR'],
      ]),
    );
    assert.equal(schemeOf(duitnow)?.scheme.id, 'my_duitnow');
    assert.equal(duitnow.currency, 'MYR');
  });

  it('accepts a lower-case CRC and refuses a wrong one', () => {
    const good = encodeEmv(payNowFields());
    decodeEmvco(good.slice(0, -4) + good.slice(-4).toLowerCase());
    const crc = good.slice(-4);
    const wrong = good.slice(0, -4) + (crc === '0000' ? '0001' : '0000');
    assert.throws(
      () => decodeEmvco(wrong),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'crc_mismatch',
    );
    // One character of content changed, CRC kept.
    const tampered = good.replace('KOPI CORNER', 'KOPI CORNEX');
    assert.throws(
      () => decodeEmvco(tampered),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'crc_mismatch',
    );
    assert.throws(
      () => decodeEmvco(good.slice(0, -4) + 'ZZZZ'),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'crc_mismatch',
    );
  });

  it('refuses truncated and malformed TLV', () => {
    const good = encodeEmv(payNowFields());
    for (const cut of [10, 40, good.length - 2]) {
      assert.throws(
        () => decodeEmvco(good.slice(0, cut)),
        (e: unknown) => e instanceof EmvcoError,
        `cut at ${cut}`,
      );
    }
    assert.throws(
      () => parseTlv('000201' + '5909ABC'),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'truncated',
    );
    assert.throws(
      () => parseTlv('00020159'),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'truncated',
    );
    assert.throws(
      () => parseTlv('0002015AXXABC'),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'malformed_tlv',
    );
    // A nested template whose inner lengths do not add up.
    const badNested = encodeEmv([
      ['00', '01'],
      ['26', '0009SG.PAYNOW0105AB'],
      ['52', '0000'],
      ['53', '702'],
      ['58', 'SG'],
      ['59', 'X'],
      ['60', 'Y'],
    ]);
    assert.throws(
      () => decodeEmvco(badNested),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'truncated',
    );
    // The same ID twice.
    const dup = encodeEmv([
      ['00', '01'],
      ['26', [['00', 'SG.PAYNOW']]],
      ['52', '0000'],
      ['53', '702'],
      ['58', 'SG'],
      ['59', 'A'],
      ['59', 'B'],
      ['60', 'Y'],
    ]);
    assert.throws(
      () => decodeEmvco(dup),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'duplicate_field',
    );
  });

  it('refuses text that is not an EMVCo QR', () => {
    for (const text of [
      '',
      'hello world',
      'https://pay.example.com/qr/123',
      '{"amount":10}',
      '000202' + 'xx',
      'upi://pay?pa=a@b',
    ]) {
      assert.throws(
        () => decodeEmvco(text),
        (e: unknown) => e instanceof EmvcoError && e.problem === 'not_emv',
        text,
      );
    }
    assert.throws(
      () => decodeEmvco('000201' + 'A'.repeat(payloadLengthMax)),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'too_long',
    );
  });

  it('refuses a missing CRC, a bad format indicator and missing or malformed mandatory fields', () => {
    const noCrc = payNowFields().map(tlv).join('');
    assert.throws(
      () => decodeEmvco(noCrc),
      (e: unknown) => e instanceof EmvcoError && e.problem === 'crc_missing',
    );
    const problems: Array<[Field[], string]> = [
      [payNowFields().filter(([id]) => id !== '59'), 'missing_field'],
      [payNowFields().filter(([id]) => id !== '53'), 'missing_field'],
      [payNowFields().filter(([id]) => id !== '26' && id !== '51'), 'missing_field'],
      [payNowFields().map(([id, v]): Field => [id, id === '53' ? '999' : v]), 'unknown_currency'],
      [payNowFields().map(([id, v]): Field => [id, id === '58' ? 'sg' : v]), 'bad_field'],
      [payNowFields().map(([id, v]): Field => [id, id === '01' ? '13' : v]), 'bad_field'],
      [payNowFields({ amount: '1,00' }), 'bad_field'],
      [payNowFields({ name: 'A NAME THAT IS FAR TOO LONG FOR EMV' }), 'bad_field'],
    ];
    for (const [fields, problem] of problems) {
      assert.throws(
        () => decodeEmvco(encodeEmv(fields)),
        (e: unknown) => e instanceof EmvcoError && e.problem === problem,
        problem,
      );
    }
    // Format indicator "02" (the payload must still start with 000201 to be EMV at all).
    const v2 = encodeEmv([
      ['00', '01'],
      ['00', '02'],
    ]);
    assert.throws(
      () => decodeEmvco(v2),
      (e: unknown) => e instanceof EmvcoError,
    );
  });
});

describe("the QR amount at the asset's scale (decode as payment reads it)", () => {
  const qr = (amount: string) => decodeEmvco(encodeEmv(payNowFields({ amount })));
  const invalid = (err: unknown) => err instanceof ApiError && err.code === 'qr_code_invalid';

  it("reads and prints at one scale: the payable asset's, else the currency's", () => {
    assert.equal(qrAmountText(qr('12.5'), undefined), '12.50');
    assert.equal(qrAmountText(qr('12.5'), 2), '12.50');
    // An operator asset whose scale differs from ISO 4217's: same value, never a power of ten off.
    assert.equal(qrAmountText(qr('12.5'), 4), '12.5000');
    assert.equal(qrAmountText(qr('12'), 0), '12');
    assert.equal(qrAmountText(qr('1.005'), 3), '1.005');
    assert.equal(amountToPay(qr('1.005'), 3, undefined), 1005n);
    assert.equal(qrAmountText(decodeEmvco(encodeEmv(payNowFields())), 4), null);
  });

  it(
    'refuses (qr_code_invalid) an amount with more places than the asset allows, as payment does; ' + 'never rounds',
    () => {
      assert.throws(() => qrAmountText(qr('12.5'), 0), invalid);
      assert.throws(() => amountToPay(qr('12.5'), 0, undefined), invalid);
      assert.throws(() => qrAmountText(qr('1.005'), 2), invalid);
    },
  );

  it('refuses (qr_code_invalid) a zero amount in the QR, at decode and at payment, whatever the caller sends', () => {
    for (const zero of ['0', '0.00', '000', '00.0']) {
      assert.throws(() => qrAmountText(qr(zero), undefined), invalid, zero);
      assert.throws(() => amountToPay(qr(zero), 2, undefined), invalid, zero);
      assert.throws(() => amountToPay(qr(zero), 2, '1.00'), invalid, zero);
    }
    // A QR without an amount still takes the caller's.
    assert.equal(amountToPay(decodeEmvco(encodeEmv(payNowFields())), 2, '1.50'), 150n);
  });
});

describe('QR payment state decisions (pure)', () => {
  const open = { status: 'processing' as const, upstreamOutcome: 'timeout' as const, callAgeMs: 120_000 };

  it('maps the payment call answers', () => {
    assert.deepEqual(decideOnCall({ kind: 'rejected', reason: 'no' }), { kind: 'fail', reason: 'upstream_rejected' });
    assert.deepEqual(decideOnCall({ kind: 'timeout' }), { kind: 'wait', outcome: 'timeout' });
    assert.deepEqual(decideOnCall({ kind: 'unknown', reason: '5xx' }), { kind: 'wait', outcome: 'unknown' });
    assert.equal(
      decideOnCall({ kind: 'accepted', providerOrderId: 'P1', status: 'succeeded', detail: {} }).kind,
      'complete',
    );
    assert.equal(
      decideOnCall({ kind: 'accepted', providerOrderId: 'P1', status: 'processing', detail: {} }).kind,
      'wait',
    );
    assert.equal(
      decideOnCall({ kind: 'accepted', providerOrderId: 'P1', status: 'SANDBOX_UNKNOWN_STATUS', detail: {} }).kind,
      'suspend',
    );
  });

  it('maps status query answers; not_found fails only after the grace and only if never accepted', () => {
    assert.equal(
      decideOnQuery(open, { kind: 'found', providerOrderId: 'P', status: 'succeeded' }, 60_000).kind,
      'complete',
    );
    assert.equal(decideOnQuery(open, { kind: 'found', providerOrderId: 'P', status: 'failed' }, 60_000).kind, 'fail');
    assert.equal(
      decideOnQuery(open, { kind: 'found', providerOrderId: 'P', status: 'refunded' }, 60_000).kind,
      'complete_and_refund',
    );
    assert.equal(decideOnQuery(open, { kind: 'not_found' }, 60_000).kind, 'fail');
    assert.equal(decideOnQuery({ ...open, callAgeMs: 1_000 }, { kind: 'not_found' }, 60_000).kind, 'none');
    assert.equal(
      decideOnQuery({ ...open, upstreamOutcome: 'accepted' }, { kind: 'not_found' }, 60_000).kind,
      'suspend',
    );
    assert.equal(decideOnQuery(open, { kind: 'timeout' }, 0).kind, 'none');
    assert.equal(decideOnQuery(open, { kind: 'unknown', reason: 'x' }, 0).kind, 'none');
    assert.equal(
      decideOnQuery({ ...open, status: 'completed' }, { kind: 'found', providerOrderId: 'P', status: 'failed' }, 0)
        .kind,
      'none',
    );
    const suspended = { ...open, status: 'suspended' as const, upstreamOutcome: 'accepted' as const };
    assert.equal(
      decideOnQuery(suspended, { kind: 'found', providerOrderId: 'P', status: 'SANDBOX_UNKNOWN_STATUS' }, 0).kind,
      'wait',
      'no second alert',
    );
    assert.equal(
      decideOnQuery(suspended, { kind: 'found', providerOrderId: 'P', status: 'succeeded' }, 0).kind,
      'complete',
    );
  });

  it('shows suspended as processing and backs off exponentially with a cap', () => {
    assert.equal(publicStatus('suspended'), 'processing');
    assert.equal(publicStatus('refunded'), 'refunded');
    assert.deepEqual(
      [1, 2, 3, 4, 10, 60].map((n) => recheckDelayMs(n, 5_000, 600_000)),
      [5_000, 10_000, 20_000, 40_000, 600_000, 600_000],
    );
    assert.equal(recheckDelayMs(7, 0, 600_000), 0);
  });
});
