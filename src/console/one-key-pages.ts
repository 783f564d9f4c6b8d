/**
 * One API key's page: the allow-list edited one entry per line with a preview of each line,
 * rotation with an overlap, disabling (each asked first on a page that names the key). Every write
 * is the merchants area's own function (updateKey, rotateKey) with the operator API's rules.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { getKey, rotateKey, updateKey } from '../modules/merchants/index.js';
import { attempt, redirect, type PageRequest } from './http.js';
import { one, formOf } from './form.js';
import { auditPage } from './audit.js';
import { allowlistLines, can, refusalFor } from './rules.js';
import { askFirst, envPath, realTimeMark, sendConfirmPage, sendPage, when } from './views.js';
import { csrfInput, durationOptions, selectInput } from './fields.js';
import { keyStatus, scopeList, secretsPanel, type KeyRow } from './key-views.js';
import { allowlistPreview, allowlistSent, saveAnywayButton, unmatchedRefusal } from './allowlist-form.js';
import { getPage, postChange } from './guards.js';

const keyId = (req: FastifyRequest) => (req.params as { id: string }).id;

const overlaps = durationOptions([
  [0, 'None: the old key stops now'],
  [3600, '1 hour'],
  [86400, '24 hours'],
  [604800, '7 days'],
]);

/** The key, if it is this merchant's in this environment (else "not found", whatever it is). */
async function ownedKey(db: Parameters<typeof getKey>[0], page: PageRequest, id: string): Promise<KeyRow> {
  const key = await getKey(db, id).catch(() => undefined);
  if (!key || key.merchant_id !== page.session.merchantId || key.environment !== page.environment)
    throw new ApiError('not_found', 'No such API key.');
  return key;
}

async function keyPage(
  ctx: ServiceContext,
  reply: FastifyReply,
  req: FastifyRequest,
  page: PageRequest,
  extra: { draft?: string; preview?: boolean; problem?: string; notice?: string; top?: HtmlPart } = {},
  status = 200,
) {
  const k = await ownedKey(ctx.db, page, keyId(req));
  const canWrite = can(page.session.role, 'keys.write');
  const path = envPath(page.environment, `/keys/${k.id}`);
  const draft = extra.draft ?? k.ip_allowlist;
  const stopped = k.disabled || (k.expires_at !== null && new Date(k.expires_at) <= page.now);
  const saveAnyway = saveAnywayButton(draft, Boolean(extra.preview));
  const editor = html`<form method="post" action="${path}/allowlist" class="card" novalidate>
    <h2>IP allow-list</h2>${csrfInput(page)}
<div class="field"><label for="f-ip_allowlist">Entries, one per line</label><p class="hint"
  id="f-ip_allowlist-hint">An address (203.0.113.7 or an IPv6 address), a.b.c.* or a.b.c.d/8, /16, /24. Any other
     notation matches nothing. Production keys only are checked against it.</p>
<textarea id="f-ip_allowlist" name="ip_allowlist" rows="6" aria-describedby="f-ip_allowlist-hint"${
    canWrite
      ? ''
      : html`
   readonly`
  }>${draft}</textarea></div>
${
  canWrite
    ? html`<div class="actions"><button type="submit" name="intent" value="preview"
      class="secondary">Preview</button><button type="submit" name="intent" value="save">Save allow-list</button>${
        saveAnyway
      }</div>`
    : ''
}</form>
${extra.preview ? allowlistPreview(draft, req.ip) : ''}`;
  const actions =
    canWrite && !stopped
      ? html`<div class="card"><h2>Rotate or disable</h2>
<form method="get" action="${path}/rotate">${selectInput(
          'overlap_seconds',
          'The old key keeps working for',
          overlaps,
          '86400',
        )}<div class="actions"><button
  type="submit">Rotate key</button></div></form>
<div class="actions">${askFirst(`${path}/disable`, 'Disable key', { danger: true })}</div></div>`
      : '';
  return sendPage(
    reply,
    page,
    {
      title: `API key ${k.client_id}`,
      section: '/keys',
      problem: extra.problem,
      notice: extra.notice,
      body: html`${extra.top ?? ''}<div class="card"><dl class="summary"><dt>Client id</dt>
        <dd><code>${k.client_id}</code></dd><dt>Key id</dt><dd><code>${k.id}</code></dd><dt>Status</dt>
          <dd>${keyStatus(k, page.now)}</dd><dt>Scopes</dt><dd>${scopeList(k)}</dd>${
            k.rotated_from
              ? html`<dt>Rotated from</dt><dd><a href="${envPath(page.environment, `/keys/${k.rotated_from}`)}"><code>${
                  k.rotated_from
                }</code></a></dd>`
              : ''
          }<dt>Created${realTimeMark(page)}</dt><dd>${when(k.created_at)}</dd></dl></div>${editor}${actions}
<p><a href="${envPath(page.environment, '/keys')}">All keys</a></p>`,
    },
    status,
  );
}

export function registerOneKeyPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/keys/:id', (req, reply, page) => {
    const saved = (req.query as { saved?: string }).saved;
    return keyPage(ctx, reply, req, page, {
      notice:
        saved === 'allowlist' ? 'The allow-list is saved.' : saved === 'disabled' ? 'This key is disabled.' : undefined,
    });
  });

  // Disabling and rotating cannot be undone: a page first names the key (and the overlap chosen).
  getPage(app, ctx, '/console/:env/keys/:id/disable', async (req, reply, page) => {
    const k = await ownedKey(ctx.db, page, keyId(req));
    const path = envPath(page.environment, `/keys/${k.id}`);
    return sendConfirmPage(reply, page, {
      title: 'Disable the key?',
      section: '/keys',
      refused: refusalFor(page.session.role, 'keys.write', 'change keys'),
      question: html`Disable the API key ${k.client_id}? Every call signed with it is refused from now on; a
             disabled key cannot be enabled again from the console.`,
      facts: [
        ['Client id', html`<code>${k.client_id}</code>`],
        ['Scopes', scopeList(k)],
        ['Created', when(k.created_at)],
      ],
      action: `${path}/disable`,
      button: `Yes, disable ${k.client_id}`,
      danger: true,
      back: path,
    });
  });

  getPage(app, ctx, '/console/:env/keys/:id/rotate', async (req, reply, page) => {
    const k = await ownedKey(ctx.db, page, keyId(req));
    const path = envPath(page.environment, `/keys/${k.id}`);
    const overlap =
      overlaps.find((o) => o.value === (req.query as { overlap_seconds?: string }).overlap_seconds) ??
      overlaps.find((o) => o.value === '86400')!;
    return sendConfirmPage(reply, page, {
      title: 'Rotate the key?',
      section: '/keys',
      refused: refusalFor(page.session.role, 'keys.write', 'change keys'),
      question: html`Make a new key in place of ${k.client_id}? ${
        overlap.value === '0'
          ? 'The old key stops at once.'
          : `The old key keeps working for ${overlap.label}, then stops for good.`
      }`,
      facts: [
        ['Client id', html`<code>${k.client_id}</code>`],
        ['Scopes', scopeList(k)],
        ['Old key works for', overlap.label],
      ],
      action: `${path}/rotate`,
      button: `Yes, rotate ${k.client_id}`,
      back: path,
      fields: { overlap_seconds: overlap.value },
    });
  });

  postChange(app, ctx, '/console/:env/keys/:id/allowlist', 'keys.write', async (req, reply, page) => {
    const form = formOf(req);
    const draft = allowlistSent(form);
    const intent = one(form, 'intent');
    if (intent !== 'save' && intent !== 'save-anyway') return keyPage(ctx, reply, req, page, { draft, preview: true });
    const unmatched = unmatchedRefusal(draft, intent);
    if (unmatched) return keyPage(ctx, reply, req, page, { draft, preview: true, problem: unmatched }, 400);
    const r = await attempt(ctx, async (trx) => {
      const key = await ownedKey(trx, page, keyId(req));
      await updateKey(trx, key.id, { ip_allowlist: draft }, page.now);
      await auditPage(trx, page, 'api_key.allowlist', key.id, allowlistLines(draft).join(', '));
    });
    if (!r.ok) return keyPage(ctx, reply, req, page, { draft, preview: true, problem: r.problem }, 400);
    return redirect(reply, `${envPath(page.environment, `/keys/${keyId(req)}`)}?saved=allowlist`);
  });

  postChange(app, ctx, '/console/:env/keys/:id/rotate', 'keys.write', async (req, reply, page) => {
    const overlap = Number(one(formOf(req), 'overlap_seconds'));
    if (!overlaps.some((o) => Number(o.value) === overlap))
      return keyPage(ctx, reply, req, page, { problem: 'Choose how long the old key keeps working.' }, 400);
    const r = await attempt(ctx, async (trx) => {
      const key = await ownedKey(trx, page, keyId(req));
      const next = await rotateKey(trx, key.id, overlap, page.now);
      await auditPage(trx, page, 'api_key.rotate', key.id, `new key ${next.id}; overlap ${overlap} s`);
      return next;
    });
    if (!r.ok) return keyPage(ctx, reply, req, page, { problem: r.problem }, 400);
    (req.params as { id: string }).id = r.value.id;
    return keyPage(ctx, reply, req, page, { top: secretsPanel(r.value, `New key ${r.value.client_id}`) }, 201);
  });

  postChange(app, ctx, '/console/:env/keys/:id/disable', 'keys.write', async (req, reply, page) => {
    const r = await attempt(ctx, async (trx) => {
      const key = await ownedKey(trx, page, keyId(req));
      await updateKey(trx, key.id, { disabled: true }, page.now);
      await auditPage(trx, page, 'api_key.disable', key.id, '');
    });
    if (!r.ok) return keyPage(ctx, reply, req, page, { problem: r.problem }, 400);
    return redirect(reply, `${envPath(page.environment, `/keys/${keyId(req)}`)}?saved=disabled`);
  });
}
