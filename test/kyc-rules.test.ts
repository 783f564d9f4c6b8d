import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ageInYears,
  levelAfterUpdate,
  levelOnApproval,
  normaliseProfileFields,
  orderRequirements,
  sniffImageType,
  validateImage,
  validateProfileFields,
} from '../src/modules/kyc/rules.js';

/** The KYC rules (src/modules/kyc/rules.ts): pure, no service. */

const today = new Date('2026-11-23T10:00:00Z');
const form = {
  first_name: ' Ada ',
  last_name: "O'Neil-Lovelace",
  birth_date: '1990-03-27',
  nationality: 'gb',
  document_type: 'passport',
  document_number: ' ab  123 456 ',
  address_line1: '1 High   Street',
  address_line2: '',
  city: 'London',
  postal_code: 'SW1A 1AA',
  address_country: 'gb',
};
const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00]);
const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]);
const fieldsOf = (over: Partial<typeof form>) =>
  validateProfileFields(normaliseProfileFields({ ...form, ...over }), today).map((p) => p.field);

describe('KYC rules (pure)', () => {
  it('normalises: trimmed, inner spaces collapsed, codes and document number upper-cased, every field present', () => {
    const f = normaliseProfileFields(form);
    assert.equal(f.first_name, 'Ada');
    assert.equal(f.document_number, 'AB 123 456');
    assert.equal(f.address_line1, '1 High Street');
    assert.equal(f.nationality, 'GB');
    assert.equal(f.address_country, 'GB');
    assert.equal(normaliseProfileFields({}).city, '');
  });

  it('counts whole years on the UTC calendar and refuses impossible dates', () => {
    assert.equal(ageInYears('2008-11-23', today), 18);
    assert.equal(ageInYears('2008-11-24', today), 17);
    assert.equal(ageInYears('2000-02-29', new Date('2026-02-28T23:59:59Z')), 25);
    assert.equal(ageInYears('2000-02-29', new Date('2026-03-01T00:00:00Z')), 26);
    assert.equal(ageInYears('2001-02-29', today), undefined);
    assert.equal(ageInYears('1990-13-01', today), undefined);
    assert.equal(ageInYears('27/03/1990', today), undefined);
    assert.equal(ageInYears('2027-01-01', today), -1);
  });

  it('accepts a valid profile and names each refused field', () => {
    assert.deepEqual(fieldsOf({}), []);
    assert.deepEqual(fieldsOf({ first_name: '' }), ['first_name']);
    assert.deepEqual(fieldsOf({ last_name: 'x'.repeat(101) }), ['last_name']);
    assert.deepEqual(fieldsOf({ first_name: 'R2D2' }), ['first_name']);
    assert.deepEqual(fieldsOf({ birth_date: '2010-01-01' }), ['birth_date'], 'under 18');
    assert.deepEqual(fieldsOf({ birth_date: '1900-01-01' }), ['birth_date'], 'over 120');
    assert.deepEqual(fieldsOf({ birth_date: '2030-01-01' }), ['birth_date'], 'in the future');
    assert.deepEqual(fieldsOf({ nationality: 'XX', address_country: 'ZZ' }), ['nationality', 'address_country']);
    assert.deepEqual(fieldsOf({ document_type: 'ticket' }), ['document_type']);
    assert.deepEqual(fieldsOf({ document_number: 'AB/12' }), ['document_number']);
    assert.deepEqual(fieldsOf({ postal_code: '1'.repeat(21) }), ['postal_code']);
    assert.deepEqual(fieldsOf({ city: 'Lon\u0007don' }), ['city']);
    const messages = validateProfileFields(normaliseProfileFields({ ...form, birth_date: '2010-01-01' }), today);
    assert.deepEqual(messages, [{ field: 'birth_date', message: 'You must be at least 18 years old' }]);
  });

  it('knows JPEG and PNG by their first bytes only', () => {
    assert.equal(sniffImageType(png), 'image/png');
    assert.equal(sniffImageType(jpeg), 'image/jpeg');
    assert.equal(sniffImageType(png.subarray(0, 7)), undefined, 'a truncated PNG signature');
    assert.equal(sniffImageType(Uint8Array.from([0xff, 0xd8])), undefined);
    assert.equal(sniffImageType(new TextEncoder().encode('GIF89a')), undefined);
  });

  it('checks an image: required when nothing is kept, then size, emptiness and type', () => {
    assert.equal(validateImage('document_image', undefined, false, 5), undefined);
    assert.deepEqual(validateImage('document_image', undefined, true, 5), {
      field: 'document_image',
      message: 'Choose a photo of your document',
    });
    assert.equal(
      validateImage('selfie_image', { data: png, tooLarge: true }, true, 5)?.message,
      'The photo of your face must be smaller than 5 MB',
    );
    assert.equal(
      validateImage('selfie_image', { data: new Uint8Array(0), tooLarge: false }, true, 5)?.message,
      'The photo of your face is empty; choose another file',
    );
    assert.equal(
      validateImage('selfie_image', { data: Uint8Array.from([1, 2, 3]), tooLarge: false }, true, 5)?.message,
      'The photo of your face must be a JPEG or PNG image',
    );
    assert.equal(validateImage('selfie_image', { data: jpeg, tooLarge: false }, true, 5), undefined);
  });

  it('drops the level to 0 on an update and grants 1 unless the reviewer says 2', () => {
    assert.equal(levelAfterUpdate(2), 0);
    assert.equal(levelAfterUpdate(0), 0);
    assert.equal(levelOnApproval(undefined), 1);
    assert.equal(levelOnApproval(1), 1);
    assert.equal(levelOnApproval(2), 2);
  });

  it('lists the named businesses first, in the reference order, then the others by name', () => {
    const rows = ['zeta', 'exchange', 'alpha', 'card_issuing', 'high_value_transfer', 'remittance'].map((business) => ({
      business,
    }));
    assert.deepEqual(
      orderRequirements(rows).map((r) => r.business),
      ['card_issuing', 'remittance', 'exchange', 'high_value_transfer', 'alpha', 'zeta'],
    );
    assert.equal(rows[0]!.business, 'zeta', 'the input is not sorted in place');
  });
});
