/**
 * Bank-detail validators and normalisers (pure). IBAN and BIC come from `ibantools` (the SWIFT
 * IBAN registry's per-country lengths and BBAN formats, ISO 13616 mod-97, ISO 9362 BIC shape and
 * country); UK sort codes and US ABA routing numbers are checked here (their rules are short and
 * stable: six digits; nine digits with the 3-7-1 weighted checksum).
 */
import {
  electronicFormatIBAN,
  extractBIC,
  getCountrySpecifications,
  isValidBIC,
  validateIBAN,
  ValidationErrorsIBAN,
} from 'ibantools';

/** Hyphens, spaces (any Unicode space, tabs included) and dots that people type inside codes. */
const separators = /[\s\u00a0\u2000-\u200b\u202f\u205f\u3000\-\u2010-\u2015.]/g;

/** alnum_upper normalisation (the reference): hyphens and spaces removed, upper-cased. */
export function normaliseAlnumUpper(value: string): string {
  return value.replace(separators, '').toUpperCase();
}

/** Digits-only codes (sort code, ABA, account numbers): separators removed. */
export function normaliseDigits(value: string): string {
  return value.replace(separators, '');
}

/** An IBAN in electronic format: no spaces or hyphens, upper case (`DE89 3704 …` → `DE893704…`). */
export function normaliseIban(value: string): string {
  return (electronicFormatIBAN(normaliseAlnumUpper(value)) ?? '').toUpperCase();
}

/** Free text: trimmed, runs of white space collapsed to one space, NFC. */
export function normaliseText(value: string): string {
  return value.normalize('NFC').replace(/\s+/g, ' ').trim();
}

export type IbanProblem = 'iban_length' | 'iban_checksum' | 'pattern';

/**
 * Checks an electronic-format IBAN: known country (else `pattern`), the country's length
 * (`iban_length`), the BBAN format of the country (`pattern`), mod-97 (`iban_checksum`), and
 * the expected country when one is given (`pattern`).
 */
export function checkIban(iban: string, expectedCountry?: string): IbanProblem | undefined {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$/.test(iban)) return 'pattern';
  const spec = getCountrySpecifications()[iban.slice(0, 2)];
  if (!spec || !spec.chars) return 'pattern';
  if (iban.length !== spec.chars) return 'iban_length';
  if (expectedCountry && iban.slice(0, 2) !== expectedCountry) return 'pattern';
  const { errorCodes } = validateIBAN(iban);
  if (errorCodes.includes(ValidationErrorsIBAN.WrongBBANFormat)) return 'pattern';
  if (
    errorCodes.includes(ValidationErrorsIBAN.WrongIBANChecksum) ||
    errorCodes.includes(ValidationErrorsIBAN.ChecksumNotNumber)
  )
    return 'iban_checksum';
  // A national check digit inside the BBAN (e.g. some countries' bank-branch checks).
  if (errorCodes.includes(ValidationErrorsIBAN.WrongAccountBankBranchChecksum)) return 'iban_checksum';
  return errorCodes.length === 0 ? undefined : 'pattern';
}

/** The length an IBAN of `country` has, or undefined for a country without IBANs. */
export function ibanLengthOf(country: string): number | undefined {
  return getCountrySpecifications()[country]?.chars ?? undefined;
}

/** ISO 9362 BIC: 8 or 11 characters, a real country code; optionally of an expected country. */
export function checkBic(bic: string, expectedCountry?: string): 'pattern' | undefined {
  if (!/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic) || !isValidBIC(bic)) return 'pattern';
  if (expectedCountry && bicCountry(bic) !== expectedCountry) return 'pattern';
  return undefined;
}

/** The country of a BIC (characters 5 and 6). */
export function bicCountry(bic: string): string | undefined {
  return extractBIC(bic).countryCode ?? undefined;
}

/** UK sort code: six digits once separators are gone. */
export function checkSortCode(code: string): 'pattern' | undefined {
  return /^[0-9]{6}$/.test(code) ? undefined : 'pattern';
}

/**
 * US ABA routing transit number: nine digits, the first two a valid Federal Reserve prefix
 * (00-12, 21-32, 61-72, 80), and 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10).
 */
export function checkAbaRouting(code: string): 'pattern' | undefined {
  if (!/^[0-9]{9}$/.test(code)) return 'pattern';
  const prefix = Number(code.slice(0, 2));
  const prefixOk = prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  if (!prefixOk) return 'pattern';
  const d = [...code].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0 ? undefined : 'pattern';
}

/** The ABA check digit (ninth digit) for the first eight; tests and the simulator build valid numbers with it. */
export function abaCheckDigit(first8: string): number {
  const d = [...first8].map(Number);
  const partial = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]!);
  return (10 - (partial % 10)) % 10;
}

/** ISO 3166-1 alpha-2 shape and a country the IBAN registry or the BIC rules know. */
export function checkCountry(code: string): 'pattern' | undefined {
  return /^[A-Z]{2}$/.test(code) ? undefined : 'pattern';
}
