import type { Environment } from '../db/schema.js';
import { html, type HtmlPart, type SafeHtml } from '../modules/hosted-screens/index.js';
import type { FastifyReply } from 'fastify';
import { consoleBase, csrfField, sendHtml, type PageRequest } from './http.js';
import { nav } from './nav.js';

/**
 * The console's page parts: the shell (top bar with the environment switch, side navigation: nav.ts,
 * main), tables, buttons that post, notices (form fields: fields.ts). Pure functions from data to
 * markup; values are escaped by the `html` tag of the hosted pages. No script: only links and forms.
 */

export const stylesheetPath = `${consoleBase}/assets/console.css`;

export const envPath = (environment: Environment, rest = '') => `${consoleBase}/${environment}${rest}`;

export interface Shell {
  title: string;
  /** The nav entry this page belongs to ('' is the overview). */
  section: string;
  body: HtmlPart;
  notice?: string;
  problem?: string;
}

function document(title: string, body: HtmlPart): string {
  return (
    '<!doctype html>\n' +
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport"
      content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
        <title>${title} · Merchant console</title><link rel="stylesheet" href="${stylesheetPath}"></head>
          <body>${body}</body></html>`.value
  );
}

export function messages(notice?: string, problem?: string): SafeHtml {
  return html`${
    problem ? html`<div class="problem" role="alert"><strong>There is a problem:</strong> ${problem}</div>` : ''
  }${notice ? html`<div class="notice" role="status">${notice}</div>` : ''}`;
}

/** The answer with a signed-in page (`consolePage`), 200 unless `status` says otherwise. */
export function sendPage(reply: FastifyReply, page: PageRequest, shell: Shell, status = 200): FastifyReply {
  return sendHtml(reply, status, consolePage(page, shell));
}

/** A signed-in page: top bar, side navigation, the page's own content. */
export function consolePage(page: PageRequest, shell: Shell): string {
  const other: Environment = page.environment === 'sandbox' ? 'production' : 'sandbox';
  // The switch keeps the section (not the object: an id of one environment means nothing in the other).
  const section = nav.some((g) => g.items.some((i) => i.path === shell.section)) ? shell.section : '';
  const switchTo = (env: Environment) =>
    envPath(env, env === 'production' && (section === '/tools' || section === '/helpers') ? '' : section);
  const links = nav.map((group) => {
    const items = group.items.filter((i) => !i.show || i.show(page));
    if (items.length === 0) return '';
    return html`<h2>${group.heading}</h2><ul>${items.map(
      (i) =>
        html`<li><a href="${envPath(page.environment, i.path)}"${
          i.path === shell.section ? html` aria-current="page"` : ''
        }>${i.label}</a></li>`,
    )}</ul>`;
  });
  return document(
    shell.title,
    html`<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="topbar"><span class="brand">${page.session.merchantName}</span>
<nav class="envswitch" aria-label="Environment"><a href="${switchTo('sandbox')}"
  aria-current="${page.environment === 'sandbox' ? 'true' : 'false'}">Sandbox</a><a href="${switchTo('production')}"
    aria-current="${page.environment === 'production' ? 'true' : 'false'}">Production</a></nav>
<span class="who">${page.session.email} (${page.session.role})</span>
<form method="post" action="${consoleBase}/sign-out"><input type="hidden"
  name="${csrfField}" value="${page.csrf}"><button type="submit">Sign out</button></form></div>
${
  page.environment === 'sandbox'
    ? html`<div class="envbanner">Sandbox: test data.
   Times are on your sandbox clock unless marked “real time”. <a href="${switchTo(other)}">Switch to
      production</a></div>`
    : ''
}</header>
<div class="layout"><nav class="side" aria-label="Console"><details class="navfold"><summary>Menu</summary>${
      links
    }</details></nav>
<main id="main" tabindex="-1"><h1>${shell.title}</h1>${messages(shell.notice, shell.problem)}${shell.body}</main>
  </div>`,
  );
}

/** A page outside the signed-in shell (sign-in, invite, refusals before a session). */
export function plainPage(title: string, body: HtmlPart, problem?: string, notice?: string): string {
  return document(
    title,
    html`<main id="main" class="signin"><div class="card"><h1>${title}</h1>${messages(notice, problem)}${body}</div>
      </main>`,
  );
}

/** A button that posts to `action` with the CSRF field and optional hidden fields. */
export function postButton(
  page: PageRequest,
  action: string,
  label: string,
  opts: { danger?: boolean; secondary?: boolean; fields?: Record<string, string>; describedBy?: string } = {},
): SafeHtml {
  const cls = opts.danger ? 'danger' : opts.secondary ? 'secondary' : '';
  const hidden = Object.entries(opts.fields ?? {}).map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  );
  return html`<form method="post" action="${action}"><input type="hidden" name="${csrfField}" value="${page.csrf}">${
    hidden
  }<button type="submit"${
    cls ? html` class="${cls}"` : ''
  }${opts.describedBy ? html` aria-describedby="${opts.describedBy}"` : ''}>${label}</button></form>`;
}

/**
 * An irreversible action asks first: its button is a link to a page (GET of the action's own URL)
 * that names the object and the money, with the form that posts and a way back. Works without
 * script (the CSP allows none); a slip of the mouse changes nothing.
 */
export function askFirst(href: string, label: string, opts: { danger?: boolean } = {}): SafeHtml {
  return html`<a class="button${opts.danger ? ' danger' : ' secondary'}" href="${href}">${label}</a>`;
}

export interface Confirmation {
  title: string;
  section: string;
  /** What will happen, in a sentence that names the object (and the money). */
  question: HtmlPart;
  facts: readonly (readonly [string, HtmlPart])[];
  action: string;
  button: string;
  danger?: boolean;
  back: string;
  fields?: Record<string, string>;
  /** Set when the user's role cannot make this change: the page says so and offers no button. */
  refused?: string;
}

/** The answer with the page that asks before a change that cannot be undone. */
export function sendConfirmPage(reply: FastifyReply, page: PageRequest, c: Confirmation): FastifyReply {
  return sendPage(reply, page, {
    title: c.title,
    section: c.section,
    problem: c.refused,
    body: html`<div class="card confirm"><p class="question">${c.question}</p>${
      c.facts.length
        ? html`<dl
      class="summary">${c.facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`
        : ''
    }
<p><strong>This cannot be undone.</strong></p><div class="actions">${
      c.refused ? '' : postButton(page, c.action, c.button, { danger: c.danger, fields: c.fields })
    }<a
  href="${c.back}">Cancel, go back</a></div></div>`,
  });
}

export interface Column<T> {
  label: string;
  cell: (row: T) => HtmlPart;
  num?: boolean;
}

/** A data table with a caption; an empty list says so. */
export function table<T>(
  caption: string,
  columns: readonly Column<T>[],
  rows: readonly T[],
  empty = 'Nothing yet.',
): SafeHtml {
  if (rows.length === 0) return html`<div class="card"><p><strong>${caption}:</strong> ${empty}</p></div>`;
  // The box scrolls when a table is wider than it (a phone): a region with a name, focusable, so a keyboard can scroll
  // it.
  // data-label: on a phone each row stacks, each cell under its column's name (stylesheet).
  return html`<div class="table-wrap" role="region" aria-label="${caption}"
    tabindex="0"><table><caption>${caption}</caption><thead><tr>${columns.map(
      (c) => html`<th scope="col">${c.label}</th>`,
    )}</tr></thead><tbody>${rows.map(
      (r) =>
        html`<tr>${columns.map(
          (c) => html`<td data-label="${c.label}"${c.num ? html` class="num"` : ''}>${oneLine(c.cell(r))}</td>`,
        )}</tr>`,
    )}</tbody></table></div>`;
}

/** A time cell (from `when`) stays on one line: a browser would break it after a hyphen of the date. */
function oneLine(cell: HtmlPart): HtmlPart {
  return typeof cell === 'string' && /^\d{4}-\d\d-\d\d\u00a0/.test(cell)
    ? html`<span class="nowrap">${cell}</span>`
    : cell;
}

export function badge(text: string, tone: 'ok' | 'warn' | 'bad' | '' = ''): SafeHtml {
  return html`<span class="badge${tone ? ` ${tone}` : ''}">${text}</span>`;
}

/**
 * The mark of a column whose times are real time (the API call log, delivery attempts, the audit
 * log, key dates: docs/clock.md): on a sandbox page every other time is on the sandbox clock, as its
 * banner says.
 */
export const realTimeMark = (page: PageRequest) => (page.environment === 'sandbox' ? ' (real time)' : '');

/** A time in UTC, on one line (no-break spaces: a table cell does not wrap it). */
export const when = (d: Date | string | null | undefined) =>
  d
    ? new Date(d)
        .toISOString()
        .replace('T', '\u00a0')
        .replace(/\.\d{3}Z$/, '\u00a0UTC')
    : '';

/**
 * An id as lists show it: its prefix and its last 6 characters (`wdr_…9f3a1c`), the whole id in the
 * tooltip and, for search, copy and screen readers, in a visually hidden copy. Detail pages show it whole.
 */
export function shortId(id: string | null | undefined): SafeHtml {
  if (!id) return html``;
  const m = /^([a-z]{2,6}_)(.+)$/.exec(id);
  const prefix = m ? m[1]! : '';
  const rest = m ? m[2]! : id;
  if (rest.length <= 10) return html`<code class="id">${id}</code>`;
  // A value without a prefix (an address, a transaction hash) keeps its first characters too.
  const shown = prefix ? `${prefix}…${rest.slice(-6)}` : `${id.slice(0, 6)}…${id.slice(-6)}`;
  return html`<code class="id" title="${id}"><span class="visually-hidden">${id}</span><span aria-hidden="true">${
    shown
  }</span></code>`;
}

/** The short form as plain text, for messages ("Withdrawal wdr_…9f3a1c for 20 USDT is failed"). */
export function shortText(id: string): string {
  const m = /^([a-z]{2,6}_)(.+)$/.exec(id);
  return m && m[2]!.length > 10 ? `${m[1]}…${m[2]!.slice(-6)}` : id;
}

/** A long value in a table cell (an address, a transaction hash, a URL): wraps anywhere instead of widening the table.
 * */
export const longValue = (v: string | null | undefined): SafeHtml =>
  v ? html`<code class="long">${v}</code>` : html``;

/** "Older" link of a keyset list. */
export function nextPageLink(path: string, nextCursor: string | null, extra: Record<string, string> = {}): SafeHtml {
  if (!nextCursor) return html``;
  const q = new URLSearchParams({ ...extra, cursor: nextCursor });
  return html`<p><a href="${path}?${q.toString()}">Older entries</a></p>`;
}

/** One page of a list as a table, then the link to the next page; `extra`: the list's filters, kept in the link. */
export function listTable<T>(
  caption: string,
  columns: readonly Column<T>[],
  list: { data: readonly T[]; next_cursor: string | null },
  empty: string,
  path: string,
  extra: Record<string, string> = {},
): SafeHtml {
  return html`${table(caption, columns, list.data, empty)}${nextPageLink(path, list.next_cursor, extra)}`;
}

/** The page of a keyset list, newest first (members, deposits, cards, orders); its path is its nav section's. */
export function sendListPage<T>(
  reply: FastifyReply,
  page: PageRequest,
  list: {
    title: string;
    section: string;
    intro?: HtmlPart;
    columns: readonly Column<T>[];
    rows: { data: readonly T[]; next_cursor: string | null };
    empty: string;
  },
): FastifyReply {
  return sendPage(reply, page, {
    title: list.title,
    section: list.section,
    body: html`${list.intro === undefined ? '' : html`<p>${list.intro}</p>`}${listTable(
      `${list.title}, newest first`,
      list.columns,
      list.rows,
      list.empty,
      envPath(page.environment, list.section),
    )}`,
  });
}

/** A link to an object's own page, its id shortened as lists show it. */
export const idLink = (href: string, id: unknown): SafeHtml => html`<a href="${href}">${shortId(String(id))}</a>`;

/** The codes of a new set, shown once (the service keeps only their hashes). */
export function recoveryCodesPanel(codes: readonly string[]): HtmlPart {
  return html`<div class="secret" role="status"><h2>Your recovery codes</h2>
    <p><strong>Save these now: they are shown only once.</strong> Each one signs you in once in place of a code from
       your app, if you lose your phone. Keep them
        somewhere safe, apart from your password (printed, or in a password manager).</p>
<ol class="recovery-codes" id="recovery-codes">${codes.map((c) => html`<li><code class="value">${c}</code></li>`)}</ol>
  </div>`;
}
