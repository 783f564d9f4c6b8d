import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import {
  type BrandingChange,
  contrastRatio,
  displayNameMax,
  html,
  logoBytesMax,
  logoPath,
  normaliseAccent,
  readBranding,
  saveBranding,
  sniffImage,
  textOn,
} from '../modules/hosted-screens/index.js';
import { csrfField, type PageRequest } from './http.js';

import { formFieldBytesMax, one, type FormFields } from './form.js';
import { auditAccount } from './audit.js';
import { storedBranding } from './queries/area-reads.js';
import { can } from './rules.js';
import { envPath, postButton, sendPage } from './views.js';
import { refusedPage, getPage, postChange } from './guards.js';

/**
 * Branding (docs/console.md, "Branding"): the display name, logo and accent colour the hosted
 * screens show for the merchant's members. Owners only; one setting for both environments (a
 * member meets the same merchant in both), so each change is audited in both.
 */

/** The logo file of a branding post, read by the multipart hook: `truncated` when it was larger than allowed. */
const uploads = new WeakMap<FastifyRequest, { bytes: Buffer; truncated: boolean }>();

async function brandingPage(
  ctx: ServiceContext,
  reply: FastifyReply,
  page: PageRequest,
  extra: { notice?: string; problem?: string; values?: { display_name: string; accent: string } } = {},
  status = 200,
) {
  const b = (await readBranding(ctx.db, page.session.merchantId))!;
  const stored = await storedBranding(ctx.db, page.session.merchantId);
  const values = extra.values ?? { display_name: stored?.display_name ?? '', accent: stored?.accent_color ?? '' };
  const base = envPath(page.environment, '/branding');
  return sendPage(
    reply,
    page,
    {
      title: 'Branding',
      section: '/branding',
      notice: extra.notice,
      problem: extra.problem,
      body: html`<p>How the hosted screens (identity documents, profile changes, step-up codes, card details) present
         you to your members, in the sandbox and in production. Without a setting they show your registered name (${
           page.session.merchantName
         }) and a neutral look.</p>
<div class="card"><h2>Now shown</h2><p>Name: <strong>${b.name}</strong>. Accent colour: ${
        b.accent
          ? html`<code>${
              b.accent
            }</code> (button text ${textOn(b.accent) === '#ffffff' ? 'white' : 'black'}, contrast ${contrastRatio(
              b.accent,
              textOn(b.accent),
            ).toFixed(1)}:1)`
          : 'none (neutral)'
      }. Logo: ${
        b.logo
          ? html`</p><p><img id="branding-logo" src="${logoPath(page.session.merchantId)}?v=${b.logo.etag}"
            alt="Your logo"></p>${postButton(page, `${base}/logo/remove`, 'Remove the logo', { secondary: true })}`
          : html`none.</p>`
      }</div>
<div class="card"><h2>Change</h2><form method="post" action="${base}" enctype="multipart/form-data"><input type="hidden"
  name="${csrfField}" value="${page.csrf}">
<div class="field"><label for="f-display_name">Display name</label><p class="hint" id="f-display_name-hint">At most ${
        displayNameMax
      } characters. Empty: your registered name.</p><input id="f-display_name" name="display_name" type="text"
  maxlength="${displayNameMax}" value="${values.display_name}" aria-describedby="f-display_name-hint"></div>
<div class="field"><label for="f-accent">Accent colour</label><p class="hint" id="f-accent-hint">#rrggbb, for example
   #1d4ed8. The button text is white or black, whichever is readable on it. Empty: neutral.</p><input id="f-accent"
     name="accent" type="text" value="${values.accent}" aria-describedby="f-accent-hint" autocomplete="off"
       spellcheck="false"></div>
<div class="field"><label for="f-logo">Logo <span class="optional">(optional)</span></label><p class="hint"
  id="f-logo-hint">PNG, JPEG or WebP, at most ${logoBytesMax / 1024} KB. Leave empty to keep the current one.</p><input
    id="f-logo" name="logo" type="file" accept="image/png,image/jpeg,image/webp" aria-describedby="f-logo-hint"></div>
<div class="actions"><button type="submit">Save branding</button></div></form></div>`,
    },
    status,
  );
}

/** Saves the branding with its audit line (in both environments' logs: auditAccount), in one transaction. */
async function saveAudited(
  ctx: ServiceContext,
  page: PageRequest,
  change: BrandingChange,
  action: string,
  detail: string,
) {
  await ctx.db.transaction().execute(async (trx) => {
    await saveBranding(trx, page.session.merchantId, change, page.now);
    const user = { id: page.session.userId, merchant_id: page.session.merchantId, email: page.session.email };
    await auditAccount(trx, user, action, detail, page.now);
  });
}

function fieldsOf(req: FastifyRequest): FormFields {
  const body = req.body;
  return body && typeof body === 'object' ? (body as FormFields) : {};
}

export function registerBrandingPages(app: AppInstance, ctx: ServiceContext): void {
  const ownerOnly = (page: PageRequest, reply: FastifyReply) =>
    can(page.session.role, 'branding.write') ? undefined : refusedPage(page, reply, 'role');

  getPage(
    app,
    ctx,
    '/console/:env/branding',
    async (_req, reply, page) => ownerOnly(page, reply) ?? brandingPage(ctx, reply, page),
  );

  postChange(app, ctx, '/console/:env/branding/logo/remove', 'branding.write', async (_req, reply, page) => {
    const current = await storedBranding(ctx.db, page.session.merchantId);
    const change = { displayName: current?.display_name ?? null, accent: current?.accent_color ?? null, logo: null };
    await saveAudited(ctx, page, change, 'branding.logo_remove', '');
    return brandingPage(ctx, reply, page, {
      notice: 'The logo was removed; the hosted screens show your name only.',
    });
  });

  // The only console form with a file: multipart is read in this scope alone (the other pages take
  // URL-encoded forms only). The hook turns the parts into the fields the CSRF check reads, and
  // keeps the file's bytes, cut at one byte over the limit (then refused as too large).
  void app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: logoBytesMax, files: 1, fields: 10, fieldSize: formFieldBytesMax, parts: 12 },
      throwFileSizeLimit: false,
    });
    scope.addHook('preHandler', async (req) => {
      if (!req.isMultipart()) return;
      const fields: Record<string, string[]> = {};
      for await (const part of req.parts()) {
        if (part.type === 'file') {
          const bytes = await part.toBuffer();
          if (part.fieldname === 'logo' && bytes.length > 0)
            uploads.set(req, { bytes, truncated: part.file.truncated });
        } else {
          (fields[part.fieldname] ??= []).push(String(part.value));
        }
      }
      req.body = fields;
    });
    postChange(scope, ctx, '/console/:env/branding', 'branding.write', async (req, reply, page) => {
      const form = fieldsOf(req);
      const values = { display_name: one(form, 'display_name').trim(), accent: one(form, 'accent').trim() };
      const refuse = (problem: string) => brandingPage(ctx, reply, page, { problem, values }, 400);
      if (values.display_name.length > displayNameMax)
        return refuse(`The display name is longer than ${displayNameMax} characters.`);
      const accent = values.accent === '' ? null : normaliseAccent(values.accent);
      if (accent === undefined)
        return refuse('The accent colour must be written #rrggbb (six hexadecimal digits), for example #1d4ed8.');
      const file = uploads.get(req);
      let logo: BrandingChange['logo'];
      if (file) {
        if (file.truncated) return refuse(`The logo is larger than ${logoBytesMax / 1024} KB. Choose a smaller image.`);
        const type = sniffImage(file.bytes);
        if (!type)
          return refuse('The logo is not a PNG, JPEG or WebP image (SVG is not accepted). Choose another file.');
        logo = { bytes: file.bytes, type };
      }
      const change: BrandingChange = {
        displayName: values.display_name === '' ? null : values.display_name,
        accent,
        logo,
      };
      const detail =
        `name ${change.displayName ?? '(registered)'}, ` +
        `accent ${accent ?? 'none'}${logo ? `, logo ${logo.type} ${logo.bytes.length} bytes` : ''}`;
      await saveAudited(ctx, page, change, 'branding.update', detail);
      return brandingPage(ctx, reply, page, { notice: 'Branding saved. The hosted screens show it from now on.' });
    });
  });
}
