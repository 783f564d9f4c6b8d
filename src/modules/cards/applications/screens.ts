import { configuredKey } from '../../../platform/auth/keys.js';
import { newId } from '../../../platform/ids.js';
import { ApiError } from '../../../platform/errors.js';
import {
  completeTicket,
  type FieldError,
  fieldset,
  form,
  type FormState,
  type HostedScreen,
  html,
  type ScreenPage,
  summaryList,
  type Ticket,
  type UploadedFile,
  voidSubjectTickets,
  voidTicket,
  ticketScope,
} from '../../hosted-screens/index.js';
import {
  documentPhotoField,
  type ImageFieldName,
  imageFields,
  imageSizeMaxMb,
  profileOfMember,
  sealedImageColumns,
  selfiePhotoField,
  sniffImageType,
  validateImage,
} from '../../kyc/index.js';
import { supplementSubmitted } from './decisions.js';
import { supplementOpen } from './state.js';
import { findApplication, insertSupplementImage } from './queries.js';
import { type Db } from '../shared/queries.js';

// Plain text (no character `html` escapes), split only to keep the lines short.
const sentNotice = 'Thank you. Your documents have been sent and your card application continues.';
const detailsHint = 'These details cannot be changed here. ' + 'If they are wrong, update your profile in the app.';

/**
 * The card supplement screen (`card_supplement` tickets, bound to one application): the member
 * re-uploads the photo of the identity document and of the face. Name, birth date, document number
 * and residence address are shown from the KYC profile and cannot be changed here. Images are
 * checked as on the KYC screen (JPEG or PNG by their bytes, under 5 MB), sealed with AES-256-GCM
 * (key `cards/supplement-images/v1`, bound to image, member and kind) and never leave the service.
 */

const supplementImageKeyLabel = 'cards/supplement-images/v1' as const;

const gonePage: ScreenPage = {
  title: 'Nothing to send',
  body: html`<p>This application no longer needs documents. You can close this page.</p>`,
};
const sentPage: ScreenPage = {
  title: 'Documents sent',
  body: html`<p class="notice">${sentNotice}</p><p>You can close this page.</p>`,
};

async function pendingApplication(db: Db, ticket: Ticket, now: Date, forUpdate = false) {
  const app = ticket.subject_id
    ? await findApplication(db, ticketScope(ticket), ticket.subject_id, forUpdate)
    : undefined;
  return app && supplementOpen(app, now) ? app : undefined;
}

async function storeImages(
  ctx: Parameters<HostedScreen['submit']>[0],
  trx: Db,
  ticket: Ticket,
  applicationId: string,
  images: { kind: 'document' | 'selfie'; data: Buffer; type: string }[],
) {
  const key = configuredKey(ctx.config, supplementImageKeyLabel);
  for (const image of images) {
    const id = newId('csi');
    const binding = { imageId: id, memberId: ticket.member_id, kind: image.kind };
    await insertSupplementImage(trx, {
      id,
      application_id: applicationId,
      member_id: ticket.member_id,
      kind: image.kind,
      content_type: image.type,
      size_bytes: image.data.length,
      ...sealedImageColumns(supplementImageKeyLabel, key, binding, image.data),
    });
  }
}

/**
 * The ticket is spent, and every other open ticket of the application is void: a ticket is bound
 * to the work order it was issued for (the reference), and the issuer may later open another work
 * order on the same application, which those links must not reach.
 */
async function spendTicket(trx: Db, ticket: Ticket, applicationId: string, now: Date): Promise<void> {
  await completeTicket(trx, ticket.id, now);
  await voidSubjectTickets(trx, ticket.member_id, 'card_supplement', applicationId);
}

function readImages(
  files: readonly UploadedFile[],
): { images: { kind: 'document' | 'selfie'; data: Buffer; type: string }[] } | { errors: FieldError[] } {
  const last: Partial<Record<ImageFieldName, UploadedFile>> = {};
  for (const f of files) if (f.field in imageFields) last[f.field as ImageFieldName] = f;
  const errors: FieldError[] = [];
  const images: { kind: 'document' | 'selfie'; data: Buffer; type: string }[] = [];
  for (const name of ['document_image', 'selfie_image'] as const) {
    const problem = validateImage(name, last[name], true, imageSizeMaxMb);
    if (problem) errors.push(problem);
    else images.push({ kind: imageFields[name], data: last[name]!.data, type: sniffImageType(last[name]!.data)! });
  }
  return errors.length > 0 ? { errors } : { images };
}

const sandboxPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export const cardSupplementScreen: HostedScreen = {
  purpose: 'card_supplement',
  acceptsFiles: true,
  async render(ctx, ticket, state) {
    if (!(await pendingApplication(ctx.db, ticket, await ctx.clock.now(ctx.db, ticketScope(ticket))))) return gonePage;
    const profile = await profileOfMember(ctx.db, ticket.member_id);
    const s: FormState = state;
    const details = profile
      ? summaryList([
          { label: 'Name', value: `${profile.first_name} ${profile.last_name}` },
          { label: 'Date of birth', value: profile.birth_date },
          { label: 'Document number', value: profile.document_number },
          {
            label: 'Home address',
            value: [
              profile.address_line1,
              profile.address_line2,
              profile.postal_code,
              profile.city,
              profile.address_country,
            ]
              .filter(Boolean)
              .join(', '),
          },
        ])
      : html`<p>We have no identity details on record yet.</p>`;
    return {
      title: 'Send new photos for your card',
      body: html`<p>The card issuer needs new photos to finish your card application. Both photos are required.</p>
        ${fieldset('Your details', [details, html`<p class="hint">${detailsHint}</p>`])}
        ${form(state.form, { multipart: true, submitLabel: 'Send photos' }, [
          fieldset('Identity document', [documentPhotoField(s, { required: true })]),
          fieldset('Your photo', [selfiePhotoField(s, { required: true })]),
        ])}`,
    };
  },
  async submit(ctx, trx, ticket, _fields, files) {
    const now = await ctx.clock.now(trx, ticketScope(ticket));
    const app = await pendingApplication(trx, ticket, now, true);
    if (!app) {
      await voidTicket(trx, ticket.id);
      return { kind: 'done', page: gonePage };
    }
    const read = readImages(files);
    if ('errors' in read) return { kind: 'invalid', values: {}, errors: read.errors };
    await storeImages(ctx, trx, ticket, app.id, read.images);
    await supplementSubmitted(ctx, trx, app);
    await spendTicket(trx, ticket, app.id, now);
    return { kind: 'done', page: sentPage };
  },
  async sandboxComplete(ctx, trx, ticket, outcome, now) {
    if (outcome !== 'submitted')
      throw new ApiError('invalid_request', 'This screen is completed with outcome `submitted`.');
    const app = await pendingApplication(trx, ticket, now, true);
    if (!app) throw new ApiError('state_invalid', 'The application no longer needs documents.');
    await storeImages(ctx, trx, ticket, app.id, [
      { kind: 'document', data: sandboxPng, type: 'image/png' },
      { kind: 'selfie', data: sandboxPng, type: 'image/png' },
    ]);
    await supplementSubmitted(ctx, trx, app);
    await spendTicket(trx, ticket, app.id, now);
  },
};
