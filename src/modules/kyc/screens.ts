// Over 300 lines: the KYC and profile-update hosted screens: their pages and submit handlers over one form.
import { ApiError } from '../../platform/errors.js';
import {
  completeTicket,
  type FieldError,
  fieldset,
  form,
  type FormFields,
  type FormState,
  type HostedScreen,
  html,
  readBranding,
  type ScreenPage,
  type ScreenState,
  selectField,
  textField,
  type UploadedFile,
  voidTicket,
  ticketScope,
} from '../hosted-screens/index.js';
import { documentPhotoField, imageSizeMaxMb, selfiePhotoField } from './photo-fields.js';
import { profileOfMember, type KycProfile } from './queries.js';
import {
  countryCodes,
  documentTypes,
  imageFields,
  normaliseProfileFields,
  profileFieldNames,
  sniffImageType,
  validateImage,
  validateProfileFields,
  type ImageFieldName,
  type ProfileFields,
} from './rules.js';
import { submitFirstProfile, submitProfileUpdate, type CheckedImage, type Submission } from './service.js';

// The screens' longer texts: plain text (nothing to escape), the same bytes in the page.
const sentNotice = 'Thank you. Your details have been sent for review.';
const sentClose = 'once the review is complete. You can close this page.';
const identityIntro =
  'We need a few details and two photos to confirm who you are. All fields are required unless marked optional.';
const updateIntro =
  'Change what is no longer correct and send the form. Your details will be reviewed again, and some services ' +
  'are paused until the review is complete.';

/**
 * The KYC screens: the first profile (`kyc` tickets) and the pre-filled update (`profile_update`).
 * One form for both; on an update the images on record are kept unless new ones are chosen.
 */

let countryOptions: { value: string; label: string }[] | undefined;
function countries(): { value: string; label: string }[] {
  if (!countryOptions) {
    const names = new Intl.DisplayNames(['en'], { type: 'region' });
    countryOptions = countryCodes
      .map((code) => ({ value: code, label: names.of(code) ?? code }))
      .sort((a, b) => a.label.localeCompare(b.label, 'en'));
  }
  return countryOptions;
}

function profileForm(state: ScreenState, opts: { update: boolean }) {
  const s: FormState = state;
  const kept = opts.update ? 'A photo is on record and is kept unless you choose a new one.' : undefined;
  return form(
    state.form,
    { multipart: true, submitLabel: opts.update ? 'Send changes for review' : 'Send for review' },
    [
      fieldset('Your name', [
        html`<p class="hint">As written on your identity document.</p>`,
        textField(s, {
          name: 'first_name',
          label: 'First name',
          autocomplete: 'given-name',
          maxLength: 100,
          required: true,
        }),
        textField(s, {
          name: 'last_name',
          label: 'Last name',
          autocomplete: 'family-name',
          maxLength: 100,
          required: true,
        }),
      ]),
      fieldset('Date of birth and nationality', [
        textField(s, {
          name: 'birth_date',
          label: 'Date of birth',
          type: 'date',
          hint: 'For example, 27 March 1990.',
          autocomplete: 'bday',
          required: true,
        }),
        selectField(s, {
          name: 'nationality',
          label: 'Nationality',
          options: countries(),
          placeholder: 'Choose a country',
          required: true,
        }),
      ]),
      fieldset('Identity document', [
        selectField(s, {
          name: 'document_type',
          label: 'Type of document',
          options: documentTypes,
          placeholder: 'Choose a document',
          required: true,
        }),
        textField(s, { name: 'document_number', label: 'Document number', maxLength: 40, required: true }),
        documentPhotoField(s, { required: !opts.update, keptNote: kept }),
      ]),
      fieldset('Home address', [
        textField(s, {
          name: 'address_line1',
          label: 'Address line 1',
          autocomplete: 'address-line1',
          maxLength: 200,
          required: true,
        }),
        textField(s, { name: 'address_line2', label: 'Address line 2', autocomplete: 'address-line2', maxLength: 200 }),
        textField(s, {
          name: 'city',
          label: 'Town or city',
          autocomplete: 'address-level2',
          maxLength: 100,
          required: true,
        }),
        textField(s, {
          name: 'postal_code',
          label: 'Postal code',
          autocomplete: 'postal-code',
          maxLength: 20,
          required: true,
        }),
        selectField(s, {
          name: 'address_country',
          label: 'Country',
          autocomplete: 'country',
          options: countries(),
          placeholder: 'Choose a country',
          required: true,
        }),
      ]),
      fieldset('Your photo', [selfiePhotoField(s, { required: !opts.update, keptNote: kept })]),
    ],
  );
}

/** The last file sent for each image field. */
function imagesFrom(files: readonly UploadedFile[]): Partial<Record<ImageFieldName, UploadedFile>> {
  const out: Partial<Record<ImageFieldName, UploadedFile>> = {};
  for (const f of files) if (f.field in imageFields) out[f.field as ImageFieldName] = f;
  return out;
}

/** The form's fields and images checked: a submission, or the errors to show with what was entered. */
function readSubmission(
  form: FormFields,
  files: readonly UploadedFile[],
  now: Date,
  imagesRequired: boolean,
): { submission: Submission } | { values: Record<string, string>; errors: FieldError[] } {
  const fields = normaliseProfileFields(form);
  const errors: FieldError[] = validateProfileFields(fields, now);
  const uploads = imagesFrom(files);
  const checked: Partial<Record<ImageFieldName, CheckedImage>> = {};
  for (const name of Object.keys(imageFields) as ImageFieldName[]) {
    const problem = validateImage(name, uploads[name], imagesRequired, imageSizeMaxMb);
    if (problem) errors.push(problem);
    else if (uploads[name]) checked[name] = { data: uploads[name]!.data, type: sniffImageType(uploads[name]!.data)! };
  }
  // The summary follows the order of the form.
  const order = [...profileFieldNames.slice(0, 6), 'document_image', ...profileFieldNames.slice(6), 'selfie_image'];
  errors.sort((a, b) => order.indexOf(a.field) - order.indexOf(b.field));
  if (errors.length > 0) return { values: { ...fields }, errors };
  return { submission: { fields, document: checked.document_image, selfie: checked.selfie_image } };
}

/** `merchant`: the name the screen's header shows (the merchant's display name), whom the member will hear from. */
const sentPage = (update: boolean, merchant: string | undefined): ScreenPage => ({
  title: update ? 'Changes sent' : 'Details sent',
  body: html`<p class="notice">${sentNotice}</p><p>You will hear from ${merchant ?? 'the app that sent you here'} ${
    sentClose
  }</p>`,
});

function profileValues(p: KycProfile): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of profileFieldNames) out[name] = p[name];
  return out;
}

/** What the sandbox helper submits as "valid data": a fixed adult and a 1x1 PNG for each image. */
const sandboxPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const sandboxFields: ProfileFields = {
  first_name: 'Sandbox',
  last_name: 'Member',
  birth_date: '1990-01-01',
  nationality: 'DE',
  document_type: 'passport',
  document_number: 'C01X00T47',
  address_line1: '1 Example Street',
  address_line2: '',
  city: 'Berlin',
  postal_code: '10115',
  address_country: 'DE',
};

function requireSubmitted(outcome: string): void {
  if (outcome !== 'submitted')
    throw new ApiError('invalid_request', 'This screen is completed with outcome `submitted`.');
}

export const kycScreen: HostedScreen = {
  purpose: 'kyc',
  acceptsFiles: true,
  async render(ctx, ticket, state) {
    if (await profileOfMember(ctx.db, ticket.member_id)) {
      return {
        title: 'Details already sent',
        body: html`<p>Your identity details have already been sent. You can close this page.</p>`,
      };
    }
    return {
      title: 'Confirm your identity',
      body: html`<p>${identityIntro}</p>${profileForm(state, { update: false })}`,
    };
  },
  async submit(ctx, trx, ticket, formFields, files, now) {
    const read = readSubmission(formFields, files, now, true);
    if (!('submission' in read)) return { kind: 'invalid', ...read };
    const result = await submitFirstProfile(ctx, trx, ticketScope(ticket), read.submission, now);
    if (result === 'exists') {
      await voidTicket(trx, ticket.id);
      return {
        kind: 'done',
        page: {
          title: 'Details already sent',
          body: html`<p>Your identity details had already been sent; nothing was changed. You can close this page.</p>`,
        },
      };
    }
    await completeTicket(trx, ticket.id, now);
    return { kind: 'done', page: sentPage(false, (await readBranding(trx, ticket.merchant_id))?.name) };
  },
  async sandboxComplete(ctx, trx, ticket, outcome, now) {
    requireSubmitted(outcome);
    const image = { data: sandboxPng, type: 'image/png' as const };
    const result = await submitFirstProfile(
      ctx,
      trx,
      ticketScope(ticket),
      { fields: sandboxFields, document: image, selfie: image },
      now,
    );
    if (result === 'exists') throw new ApiError('duplicate_resource', 'The member already has a KYC profile.');
    await completeTicket(trx, ticket.id, now);
  },
};

export const profileUpdateScreen: HostedScreen = {
  purpose: 'profile_update',
  acceptsFiles: true,
  async render(ctx, ticket, state) {
    const profile = await profileOfMember(ctx.db, ticket.member_id);
    if (!profile) throw new Error(`kyc: profile_update ticket ${ticket.id} without a profile`);
    const filled: ScreenState =
      Object.keys(state.values).length > 0 ? state : { ...state, values: profileValues(profile) };
    return {
      title: 'Update your identity details',
      body: html`<p>${updateIntro}</p>${profileForm(filled, { update: true })}`,
    };
  },
  async submit(ctx, trx, ticket, formFields, files, now) {
    const read = readSubmission(formFields, files, now, false);
    if (!('submission' in read)) return { kind: 'invalid', ...read };
    await submitProfileUpdate(ctx, trx, ticketScope(ticket), read.submission, now);
    await completeTicket(trx, ticket.id, now);
    return { kind: 'done', page: sentPage(true, (await readBranding(trx, ticket.merchant_id))?.name) };
  },
  async sandboxComplete(ctx, trx, ticket, outcome, now) {
    requireSubmitted(outcome);
    const profile = await profileOfMember(trx, ticket.member_id);
    if (!profile) throw new ApiError('state_invalid', 'The member has no KYC profile.');
    // As if the member sent the pre-filled form unchanged: same data, images kept.
    await submitProfileUpdate(
      ctx,
      trx,
      ticketScope(ticket),
      { fields: normaliseProfileFields(profileValues(profile)) },
      now,
    );
    await completeTicket(trx, ticket.id, now);
  },
};

/** Listed in src/routes.ts. */
export const kycScreens: readonly HostedScreen[] = [kycScreen, profileUpdateScreen];
