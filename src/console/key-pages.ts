// Over 300 lines: the key list, its create form and one key's page (allow-list, rotate, disable)
// share eight view and form helpers; the seam is between the list and one key, behind a shared
// module not yet written.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { AppInstance } from '../platform/http-app.js';
import type { ServiceContext } from '../service-context.js';
import type { ApiKeysTable } from '../platform/tables.js';
import { describeEntry, isAllowed } from '../platform/ip-allowlist.js';
import { restrictedScopes, scopeCatalogue } from '../platform/scopes.js';
import { ApiError } from '../platform/errors.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import {
  createKey,
  getKey,
  type KeyWithSecrets,
  rotateKey,
  splitScopes,
  updateKey,
} from '../modules/merchants/index.js';
import { attempt, redirect, sendHtml, withChange, withSession, type PageRequest } from './http.js';
import { all, one, formOf } from './form.js';
import { audit } from './audit.js';
import { listKeys } from './queries/area-reads.js';
import { allowlistLines, can } from './rules.js';
import { refusedPage } from './auth-pages.js';
import { askFirst, badge, confirmPage, consolePage, envPath, realTimeMark, table, when } from './views.js';
import { checkboxes, csrfInput, selectInput } from './fields.js';

/**
 * API keys: the list, creation (secrets shown once), the key's page (allow-list edited one entry
 * per line with a preview of each line, rotation with an overlap, disabling). Every write is the
 * merchants area's own function (createKey, updateKey, rotateKey) with the same rules the
 * operator API applies; restricted scopes asked for in production wait for the operator.
 */

type KeyRow = Selectable<ApiKeysTable>;
const route = { config: { access: { scope: 'public' as const } }, schema: { hide: true } };
const keyId = (req: FastifyRequest) => (req.params as { id: string }).id;

const overlaps = [
  { value: '0', label: 'None: the old key stops now' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '24 hours' },
  { value: '604800', label: '7 days' },
];

function keyStatus(k: KeyRow, now: Date) {
  if (k.disabled) return badge('disabled', 'bad');
  if (k.expires_at && new Date(k.expires_at) <= now) return badge('expired', 'bad');
  if (k.expires_at) return badge(`expires ${when(k.expires_at)} (real time)`, 'warn');
  return badge('active', 'ok');
}

function scopeList(k: Pick<KeyRow, 'scopes' | 'pending_scopes'>): HtmlPart {
  return html`${k.scopes.map((s) => html`<code>${s}</code> `)}${k.pending_scopes.map(
    (s) => html` ${badge(`${s}: waiting for approval`, 'warn')}`,
  )}`;
}

/** The key, if it is this merchant's in this environment (else "not found", whatever it is). */
async function ownedKey(db: Parameters<typeof getKey>[0], page: PageRequest, id: string): Promise<KeyRow> {
  const key = await getKey(db, id).catch(() => undefined);
  if (!key || key.merchant_id !== page.session.merchantId || key.environment !== page.environment)
    throw new ApiError('not_found', 'No such API key.');
  return key;
}

function secretsPanel(k: KeyWithSecrets, heading: string): HtmlPart {
  return html`<div class="secret" role="status"><h2>${heading}</h2>
    <p><strong>Copy these now: they are shown only once.</strong> The service keeps only a hash of the API key.</p>
<p>Client id</p><code class="value">${k.client_id}</code><p>API key</p><code class="value" id="new-api-key">${
    k.api_key
  }</code><p>Signing key</p><code class="value" id="new-signing-key">${k.signing_key}</code></div>`;
}

/** The lines of an allow-list that can never match (the API keeps them and they match nothing: the console says so
 * before saving). */
function neverMatching(text: string): string[] {
  return allowlistLines(text).filter((entry) => !describeEntry(entry).matches);
}

/** The problem shown when a save would keep lines that match nothing; "Save anyway" (intent save-anyway) keeps them. */
const unmatchedProblem = (lines: readonly string[]) =>
  `${lines.length === 1 ? 'This line can' : 'These lines can'} never match any address: ${lines.join(', ')}. ` +
  `Correct ${lines.length === 1 ? 'it' : 'them'}, or press "Save anyway" to ` +
  `keep ${lines.length === 1 ? 'it' : 'them'} (${lines.length === 1 ? 'it matches' : 'they match'} nothing).`;

function createForm(
  page: PageRequest,
  values: { scopes: readonly string[]; allowlist: string; expires: string },
  preview?: { clientIp: string; unmatched: boolean },
): HtmlPart {
  const options = scopeCatalogue.map((s) => ({
    value: s,
    label: restrictedScopes.has(s) && page.environment === 'production' ? `${s} (needs approval)` : s,
  }));
  return html`<form method="post" action="${envPath(page.environment, '/keys')}" class="card" novalidate>
    <h2>Create a key</h2>${csrfInput(page)}${checkboxes(
      'scopes',
      'Scopes',
      options,
      values.scopes,
      page.environment === 'production'
        ? "Restricted scopes wait for the operator's approval; the key works meanwhile with the others."
        : undefined,
    )}
<div class="field"><label for="f-ip_allowlist">IP allow-list${
    page.environment === 'sandbox' ? ' (optional in the sandbox)' : ''
  }</label><p class="hint"
  id="f-ip_allowlist-hint">One entry per line: an address (203.0.113.7), a.b.c.* or a.b.c.d/8, /16, /24.${
    page.environment === 'production' ? ' Required for a production key.' : ''
  }</p><textarea id="f-ip_allowlist" name="ip_allowlist" aria-describedby="f-ip_allowlist-hint"
    rows="4">${values.allowlist}</textarea></div>
${preview ? allowlistPreview(values.allowlist, preview.clientIp) : ''}
<div class="field"><label for="f-expires">Expires (optional, UTC, real time: a key expires on the real clock, not the
   sandbox clock)</label><input id="f-expires" name="expires" type="datetime-local" value="${values.expires}"></div>
<div class="actions"><button type="submit" name="intent" value="preview"
  class="secondary">Preview allow-list</button><button type="submit" name="intent" value="create">Create key</button>${
    preview?.unmatched
      ? html`<button type="submit" name="intent" value="save-anyway" class="secondary">Save anyway</button>`
      : ''
  }</div></form>`;
}

async function listPage(
  ctx: ServiceContext,
  reply: FastifyReply,
  page: PageRequest,
  extra: {
    top?: HtmlPart;
    problem?: string;
    notice?: string;
    form?: Parameters<typeof createForm>[1];
    preview?: Parameters<typeof createForm>[2];
  } = {},
  status = 200,
) {
  const keys = await listKeys(ctx.db, page.session.merchantId, page.environment);
  const canWrite = can(page.session.role, 'keys.write');
  return sendHtml(
    reply,
    status,
    consolePage(page, {
      title: 'API keys',
      section: '/keys',
      problem: extra.problem,
      notice: extra.notice,
      body: html`${extra.top ?? ''}${table(
        'Keys of this environment',
        [
          {
            label: 'Client id',
            cell: (k: KeyRow) =>
              html`<a href="${envPath(page.environment, `/keys/${k.id}`)}"><code>${k.client_id}</code></a>`,
          },
          { label: 'Status', cell: (k) => keyStatus(k, page.now) },
          { label: 'Scopes', cell: (k) => scopeList(k) },
          {
            label: 'Allow-list',
            cell: (k) => (k.ip_allowlist.trim() ? `${allowlistLines(k.ip_allowlist).length} entries` : 'any address'),
          },
          { label: `Created${realTimeMark(page)}`, cell: (k) => when(k.created_at) },
        ],
        keys,
        'No keys in this environment yet.',
      )}${canWrite ? createForm(page, extra.form ?? { scopes: [], allowlist: '', expires: '' }, extra.preview) : ''}`,
    }),
  );
}

/** The preview of an allow-list: each line, what it matches, and whether this browser's address would pass. */
function allowlistPreview(text: string, clientIp: string): HtmlPart {
  const lines = allowlistLines(text);
  return html`${table(
    'Preview: what each line matches',
    [
      { label: 'Line', cell: (l: { n: number; entry: string }) => String(l.n) },
      { label: 'Entry', cell: (l) => html`<code>${l.entry}</code>` },
      {
        label: 'Matches',
        cell: (l) => {
          const d = describeEntry(l.entry);
          return d.matches ? d.text : badge(d.text, 'bad');
        },
      },
    ],
    lines.map((entry, i) => ({ n: i + 1, entry })),
    'The list is empty: any address may use a sandbox key; a production key needs at least one entry.',
  )}
<p>Your address as this service sees it, <code>${clientIp}</code>, ${
    isAllowed(text, clientIp) ? 'would be allowed' : 'would not be allowed'
  }.</p>`;
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
        extra.preview && neverMatching(draft).length > 0
          ? html`<button type="submit" name="intent" value="save-anyway" class="secondary">Save anyway</button>`
          : ''
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
  return sendHtml(
    reply,
    status,
    consolePage(page, {
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
    }),
  );
}

function expiryFrom(value: string): Date | null | 'bad' {
  if (value.trim() === '') return null;
  const d = new Date(`${value}${value.length === 16 ? ':00' : ''}Z`);
  return Number.isNaN(d.getTime()) ? 'bad' : d;
}

export function registerKeyPages(app: AppInstance, ctx: ServiceContext): void {
  app.get(
    '/console/:env/keys',
    route,
    withSession(ctx, (_req, reply, page) => listPage(ctx, reply, page)),
  );

  app.post(
    '/console/:env/keys',
    route,
    withChange(
      ctx,
      'keys.write',
      async (req, reply, page) => {
        const form = formOf(req);
        const values = {
          scopes: all(form, 'scopes'),
          allowlist: allowlistLines(one(form, 'ip_allowlist')).join('\n'),
          expires: one(form, 'expires'),
        };
        const intent = one(form, 'intent');
        const unmatched = neverMatching(values.allowlist);
        if (intent === 'preview')
          return listPage(ctx, reply, page, {
            form: values,
            preview: { clientIp: req.ip, unmatched: unmatched.length > 0 },
          });
        if (unmatched.length > 0 && intent !== 'save-anyway') {
          return listPage(
            ctx,
            reply,
            page,
            { form: values, preview: { clientIp: req.ip, unmatched: true }, problem: unmatchedProblem(unmatched) },
            400,
          );
        }
        const expiresAt = expiryFrom(values.expires);
        if (expiresAt === 'bad')
          return listPage(ctx, reply, page, { problem: 'The expiry is not a date and time.', form: values }, 400);
        if (values.scopes.length === 0)
          return listPage(ctx, reply, page, { problem: 'Choose at least one scope.', form: values }, 400);
        const r = await attempt(ctx, async (trx) => {
          const { scopes, pending } = splitScopes(page.environment, values.scopes);
          const key = await createKey(
            trx,
            {
              merchantId: page.session.merchantId,
              environment: page.environment,
              scopes,
              pendingScopes: pending,
              ipAllowlist: values.allowlist,
              expiresAt,
            },
            page.now,
          );
          await audit(
            trx,
            page.session,
            page.environment,
            'api_key.create',
            key.id,
            `scopes ${key.scopes.join(' ')}${
              key.pending_scopes.length ? `; waiting ${key.pending_scopes.join(' ')}` : ''
            }`,
            page.now,
          );
          return key;
        });
        if (!r.ok) return listPage(ctx, reply, page, { problem: r.problem, form: values }, 400);
        return listPage(ctx, reply, page, { top: secretsPanel(r.value, `Key ${r.value.client_id} created`) }, 201);
      },
      refusedPage,
    ),
  );

  app.get(
    '/console/:env/keys/:id',
    route,
    withSession(ctx, (req, reply, page) => {
      const saved = (req.query as { saved?: string }).saved;
      return keyPage(ctx, reply, req, page, {
        notice:
          saved === 'allowlist'
            ? 'The allow-list is saved.'
            : saved === 'disabled'
              ? 'This key is disabled.'
              : undefined,
      });
    }),
  );

  // Disabling and rotating cannot be undone: a page first names the key (and the overlap chosen).
  app.get(
    '/console/:env/keys/:id/disable',
    route,
    withSession(ctx, async (req, reply, page) => {
      const k = await ownedKey(ctx.db, page, keyId(req));
      const path = envPath(page.environment, `/keys/${k.id}`);
      return sendHtml(
        reply,
        200,
        confirmPage(page, {
          title: 'Disable the key?',
          section: '/keys',
          refused: can(page.session.role, 'keys.write')
            ? undefined
            : `Your role (${page.session.role}) cannot change keys.`,
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
        }),
      );
    }),
  );

  app.get(
    '/console/:env/keys/:id/rotate',
    route,
    withSession(ctx, async (req, reply, page) => {
      const k = await ownedKey(ctx.db, page, keyId(req));
      const path = envPath(page.environment, `/keys/${k.id}`);
      const overlap =
        overlaps.find((o) => o.value === (req.query as { overlap_seconds?: string }).overlap_seconds) ??
        overlaps.find((o) => o.value === '86400')!;
      return sendHtml(
        reply,
        200,
        confirmPage(page, {
          title: 'Rotate the key?',
          section: '/keys',
          refused: can(page.session.role, 'keys.write')
            ? undefined
            : `Your role (${page.session.role}) cannot change keys.`,
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
        }),
      );
    }),
  );

  app.post(
    '/console/:env/keys/:id/allowlist',
    route,
    withChange(
      ctx,
      'keys.write',
      async (req, reply, page) => {
        const form = formOf(req);
        // A textarea sends CRLF line ends; the list is kept one trimmed entry per line.
        const draft = allowlistLines(one(form, 'ip_allowlist')).join('\n');
        const intent = one(form, 'intent');
        if (intent !== 'save' && intent !== 'save-anyway')
          return keyPage(ctx, reply, req, page, { draft, preview: true });
        const unmatched = neverMatching(draft);
        if (unmatched.length > 0 && intent !== 'save-anyway')
          return keyPage(ctx, reply, req, page, { draft, preview: true, problem: unmatchedProblem(unmatched) }, 400);
        const r = await attempt(ctx, async (trx) => {
          const key = await ownedKey(trx, page, keyId(req));
          await updateKey(trx, key.id, { ip_allowlist: draft }, page.now);
          await audit(
            trx,
            page.session,
            page.environment,
            'api_key.allowlist',
            key.id,
            allowlistLines(draft).join(', '),
            page.now,
          );
        });
        if (!r.ok) return keyPage(ctx, reply, req, page, { draft, preview: true, problem: r.problem }, 400);
        return redirect(reply, `${envPath(page.environment, `/keys/${keyId(req)}`)}?saved=allowlist`);
      },
      refusedPage,
    ),
  );

  app.post(
    '/console/:env/keys/:id/rotate',
    route,
    withChange(
      ctx,
      'keys.write',
      async (req, reply, page) => {
        const overlap = Number(one(formOf(req), 'overlap_seconds'));
        if (!overlaps.some((o) => Number(o.value) === overlap))
          return keyPage(ctx, reply, req, page, { problem: 'Choose how long the old key keeps working.' }, 400);
        const r = await attempt(ctx, async (trx) => {
          const key = await ownedKey(trx, page, keyId(req));
          const next = await rotateKey(trx, key.id, overlap, page.now);
          await audit(
            trx,
            page.session,
            page.environment,
            'api_key.rotate',
            key.id,
            `new key ${next.id}; overlap ${overlap} s`,
            page.now,
          );
          return next;
        });
        if (!r.ok) return keyPage(ctx, reply, req, page, { problem: r.problem }, 400);
        (req.params as { id: string }).id = r.value.id;
        return keyPage(ctx, reply, req, page, { top: secretsPanel(r.value, `New key ${r.value.client_id}`) }, 201);
      },
      refusedPage,
    ),
  );

  app.post(
    '/console/:env/keys/:id/disable',
    route,
    withChange(
      ctx,
      'keys.write',
      async (req, reply, page) => {
        const r = await attempt(ctx, async (trx) => {
          const key = await ownedKey(trx, page, keyId(req));
          await updateKey(trx, key.id, { disabled: true }, page.now);
          await audit(trx, page.session, page.environment, 'api_key.disable', key.id, '', page.now);
        });
        if (!r.ok) return keyPage(ctx, reply, req, page, { problem: r.problem }, 400);
        return redirect(reply, `${envPath(page.environment, `/keys/${keyId(req)}`)}?saved=disabled`);
      },
      refusedPage,
    ),
  );
}
