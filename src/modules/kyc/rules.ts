import type { KycImageKind, KycImageType } from './tables.js';

/**
 * Pure rules of the KYC area: the profile form's fields and their validation, image type by
 * signature, the level rules, and the requirement catalogue (docs/kyc.md). No database, no HTTP.
 */

/** ISO 3166-1 alpha-2 codes in use (and XK), for nationality and country of residence. */
export const countryCodes: readonly string[] = (
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW ' +
  'BY BZ CA CC CD CF CG CH CI CK ' +
  ('CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF ' +
    'GG GH GI GL GM GN GP GQ GR GS ') +
  ('GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ ' +
    'LA LB LC LI LK LR LS LT LU LV ') +
  ('LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU ' +
    'NZ OM PA PE PF PG PH PK PL PM ') +
  ('PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD ' +
    'TF TG TH TJ TK TL TM TN TO TR ') +
  'TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW'
).split(' ');
const countrySet = new Set(countryCodes);

export const documentTypes = [
  { value: 'passport', label: 'Passport' },
  { value: 'national_id', label: 'National identity card' },
  { value: 'driving_licence', label: 'Driving licence' },
  { value: 'residence_permit', label: 'Residence permit' },
] as const;
const documentTypeSet = new Set<string>(documentTypes.map((d) => d.value));

/** The text fields of the KYC form (names are the profile's columns). */
export const profileFieldNames = [
  'first_name',
  'last_name',
  'birth_date',
  'nationality',
  'document_type',
  'document_number',
  'address_line1',
  'address_line2',
  'city',
  'postal_code',
  'address_country',
] as const;
export type ProfileFieldName = (typeof profileFieldNames)[number];
export type ProfileFields = Record<ProfileFieldName, string>;

export const imageFields = { document_image: 'document', selfie_image: 'selfie' } as const satisfies Record<
  string,
  KycImageKind
>;
export type ImageFieldName = keyof typeof imageFields;

/** Youngest member who may hold a profile, in whole years at the merchant's today. */
export const minimumAgeYears = 18;
export const maximumAgeYears = 120;

export interface FieldProblem {
  field: string;
  message: string;
}

const personName = /^[\p{L}\p{M}][\p{L}\p{M}' .-]*$/u;
const documentNumber = /^[A-Z0-9][A-Z0-9 -]*$/;
const postalCode = /^[A-Za-z0-9][A-Za-z0-9 -]*$/;
const controlChars = /[\u0000-\u001f\u007f]/;

/** The entered values, trimmed (document number upper-cased), every field present. */
export function normaliseProfileFields(form: Readonly<Record<string, string>>): ProfileFields {
  const out = {} as ProfileFields;
  for (const name of profileFieldNames) out[name] = (form[name] ?? '').trim().replace(/\s+/g, ' ');
  out.document_number = out.document_number.toUpperCase();
  out.nationality = out.nationality.toUpperCase();
  out.address_country = out.address_country.toUpperCase();
  return out;
}

/** Whole years between a YYYY-MM-DD birth date and `today` (UTC), or undefined for an impossible date. */
export function ageInYears(birthDate: string, today: Date): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(birthDate);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
  let age = today.getUTCFullYear() - y;
  if (today.getUTCMonth() + 1 < mo || (today.getUTCMonth() + 1 === mo && today.getUTCDate() < d)) age -= 1;
  return age;
}

/** Every problem of the text fields, each with the message shown next to its field. */
export function validateProfileFields(f: ProfileFields, today: Date): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const add = (field: ProfileFieldName, message: string) => problems.push({ field, message });
  for (const name of profileFieldNames)
    if (controlChars.test(f[name])) add(name, 'Remove the special characters from this field');
  const nameRule = (field: 'first_name' | 'last_name', what: string) => {
    if (f[field] === '') add(field, `Enter your ${what}`);
    else if (f[field].length > 100) add(field, `Your ${what} must be 100 characters or fewer`);
    else if (!personName.test(f[field]))
      add(field, `Your ${what} can only contain letters, spaces, hyphens, apostrophes and full stops`);
  };
  nameRule('first_name', 'first name');
  nameRule('last_name', 'last name');
  const age = ageInYears(f.birth_date, today);
  if (f.birth_date === '') add('birth_date', 'Enter your date of birth');
  else if (age === undefined) add('birth_date', 'Enter your date of birth as a real date, for example 1990-03-27');
  else if (age < 0) add('birth_date', 'Your date of birth must be in the past');
  else if (age < minimumAgeYears) add('birth_date', `You must be at least ${minimumAgeYears} years old`);
  else if (age > maximumAgeYears) add('birth_date', 'Check the year of your date of birth');
  if (!countrySet.has(f.nationality)) add('nationality', 'Choose your nationality');
  if (!documentTypeSet.has(f.document_type)) add('document_type', 'Choose the type of your identity document');
  if (f.document_number === '') add('document_number', 'Enter the number of your identity document');
  else if (f.document_number.length > 40) add('document_number', 'The document number must be 40 characters or fewer');
  else if (!documentNumber.test(f.document_number))
    add('document_number', 'The document number can only contain letters, digits, spaces and hyphens');
  if (f.address_line1 === '') add('address_line1', 'Enter the first line of your address');
  else if (f.address_line1.length > 200) add('address_line1', 'The address line must be 200 characters or fewer');
  if (f.address_line2.length > 200) add('address_line2', 'The address line must be 200 characters or fewer');
  if (f.city === '') add('city', 'Enter your town or city');
  else if (f.city.length > 100) add('city', 'The town or city must be 100 characters or fewer');
  if (f.postal_code === '') add('postal_code', 'Enter your postal code');
  else if (f.postal_code.length > 20 || !postalCode.test(f.postal_code))
    add('postal_code', 'Enter a postal code of up to 20 letters, digits, spaces and hyphens');
  if (!countrySet.has(f.address_country)) add('address_country', 'Choose the country you live in');
  return problems;
}

/** An image's type from its first bytes (JPEG: FF D8 FF; PNG: the 8-byte signature); undefined for anything else. */
export function sniffImageType(bytes: Uint8Array): KycImageType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length >= png.length && png.every((b, i) => bytes[i] === b)) return 'image/png';
  return undefined;
}

/** An uploaded image as the screen sees it. */
export interface ImageUpload {
  data: Uint8Array;
  tooLarge: boolean;
}

export const imageLabels: Record<ImageFieldName, string> = {
  document_image: 'photo of your document',
  selfie_image: 'photo of your face',
};

/** The problem of one image field, if any. `required` when nothing is on record to keep. */
export function validateImage(
  field: ImageFieldName,
  upload: ImageUpload | undefined,
  required: boolean,
  sizeMaxMb: number,
): FieldProblem | undefined {
  const what = imageLabels[field];
  if (!upload) return required ? { field, message: `Choose a ${what}` } : undefined;
  if (upload.tooLarge) return { field, message: `The ${what} must be smaller than ${sizeMaxMb} MB` };
  if (upload.data.length === 0) return { field, message: `The ${what} is empty; choose another file` };
  if (!sniffImageType(upload.data)) return { field, message: `The ${what} must be a JPEG or PNG image` };
  return undefined;
}

/**
 * The member's level once a profile update is submitted: 0, whatever it was. The level vouches
 * for the data that was reviewed; after an update the data on file is not that data, so neither
 * level 1 nor level 2 can stand until re-review (docs/kyc.md, "Levels").
 */
export function levelAfterUpdate(_current: number): 0 {
  return 0;
}

/** The level an approval grants: the one the reviewer gives, 1 when none. */
export function levelOnApproval(level: 1 | 2 | undefined): 1 | 2 {
  return level ?? 1;
}

/** The businesses the reference names, in the order `GET /v1/kyc/requirements` lists them. */
export const namedBusinesses = ['card_issuing', 'remittance', 'exchange', 'high_value_transfer'] as const;
export const businessPattern = '^[a-z][a-z0-9_]{0,39}$';

/** Requirements in the listed order: the named businesses first, then any others by name. */
export function orderRequirements<T extends { business: string }>(rows: readonly T[]): T[] {
  const rank = (b: string) => {
    const i = (namedBusinesses as readonly string[]).indexOf(b);
    return i < 0 ? namedBusinesses.length : i;
  };
  return [...rows].sort((a, b) => rank(a.business) - rank(b.business) || a.business.localeCompare(b.business));
}
