/**
 * The console's one stylesheet (served at /console/assets/console.css; the CSP allows no other).
 * System fonts, text contrast 4.5:1 or better, a visible focus ring, a sidebar that becomes a
 * wrapping bar under 48rem, tables that scroll sideways inside their box on a phone.
 */
export const consoleStylesheet = `
*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  line-height: 1.5; color: #1b1b1b; background: #f6f7f9; }
body { margin: 0; }
a { color: #1d4ed8; }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible,
  summary:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; }
.top { display: block; }
.topbar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .5rem 1rem;
  background: #111827; color: #fff; }
.topbar .brand { font-weight: 700; margin-right: auto; }
.topbar .who { color: #e5e7eb; font-size: .9rem; }
.topbar form { margin: 0; }
.envswitch { display: inline-flex; border: 2px solid #9ca3af; border-radius: 6px; overflow: hidden; }
.envswitch a { color: #f9fafb; padding: .25rem .75rem; text-decoration: none; font-size: .9rem; }
.envswitch a[aria-current="true"] { background: #f9fafb; color: #111827; font-weight: 700; }
.envbanner { background: #fef3c7; color: #78350f; padding: .25rem 1rem; font-size: .9rem;
  border-bottom: 1px solid #f59e0b; }
.layout { display: flex; min-height: calc(100vh - 3rem); }
nav.side { width: 14rem; flex: none; background: #fff; border-right: 1px solid #d1d5db; padding: 1rem 0; }
nav.side h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: #4b5563;
  margin: 1rem 1rem .25rem; }
nav.side ul { list-style: none; margin: 0; padding: 0; }
nav.side a { display: block; padding: .35rem 1rem; color: #1f2937; text-decoration: none; }
nav.side a[aria-current="page"] { background: #eef2ff; color: #1e3a8a; font-weight: 700;
  border-left: 4px solid #1d4ed8; padding-left: calc(1rem - 4px); }
main { flex: 1; min-width: 0; padding: 1.25rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.card { background: #fff; border: 1px solid #d1d5db; border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
.card h2 { margin-top: 0; }
.table-wrap { overflow-x: auto; background: #fff; border: 1px solid #d1d5db; border-radius: 8px; margin-bottom: 1rem; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
caption { text-align: left; padding: .5rem .75rem; font-weight: 600; }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
th { background: #f3f4f6; font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em;
  overflow-wrap: anywhere; }
/* Ids and addresses in a table stay on one line: the table scrolls sideways in its box instead. */
td code, td .mono { white-space: nowrap; overflow-wrap: normal; }
/* Short ids stay on one line (the whole id is on the detail page); long values wrap anywhere,
  so the table fits its box at laptop width. */
td code.long { white-space: normal; overflow-wrap: anywhere; }
dl.summary code { user-select: all; }
/* A webhook body wraps rather than widening the page (no scroll region to reach by keyboard). */
pre.mono { white-space: pre-wrap; overflow-wrap: anywhere; }
/* The hidden whole id sits on the short one (a 1-pixel box), so a click there still lands on the link. */
code.id { position: relative; }
code.id .visually-hidden { top: 0; left: 0; margin: 0; }
.table-wrap:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.navfold > summary { display: none; }
.navfold::details-content { content-visibility: visible; display: contents; }
.confirm .question { font-size: 1.1rem; font-weight: 600; }
.nowrap { white-space: nowrap; }
td .actions { flex-direction: column; align-items: flex-start; margin: 0; }
a.button.danger { background: #b91c1c; border-color: #7f1d1d; color: #fff; }
a.button.secondary { background: #fff; color: #1e3a8a; }
td ol, td ul { margin: 0; padding-left: 1.25rem; }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 999px; font-size: .85rem; border: 1px solid #6b7280;
  color: #1f2937; background: #f9fafb; white-space: nowrap; }
.badge.ok { border-color: #15803d; color: #14532d; background: #dcfce7; }
.badge.warn { border-color: #b45309; color: #78350f; background: #fef3c7; }
.badge.bad { border-color: #b91c1c; color: #7f1d1d; background: #fee2e2; }
label { display: block; font-weight: 600; margin-bottom: .25rem; }
.field { margin-bottom: 1rem; }
.hint { color: #4b5563; font-size: .9rem; margin: 0 0 .35rem; }
input[type="text"], input[type="email"], input[type="password"], input[type="number"], input[type="datetime-local"],
  select, textarea {
  display: block; width: 100%; max-width: 32rem; font: inherit; padding: .45rem .6rem; border: 2px solid #4b5563;
  border-radius: 4px; background: #fff; color: inherit; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; min-height: 8rem; }
fieldset { border: 1px solid #d1d5db; border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; max-width: 40rem; }
legend { font-weight: 700; padding: 0 .25rem; }
.checks { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: .25rem 1rem; }
.checks label { font-weight: 400; display: flex; gap: .4rem; align-items: center; }
button, .button { font: inherit; font-weight: 600; color: #fff; background: #1d4ed8; border: 2px solid #1e3a8a;
  border-radius: 4px; padding: .4rem 1rem; cursor: pointer; text-decoration: none; display: inline-block; }
button:hover { background: #1e40af; }
button.secondary { background: #fff; color: #1e3a8a; }
button.danger { background: #b91c1c; border-color: #7f1d1d; }
.topbar button { background: transparent; border-color: #9ca3af; color: #fff; padding: .2rem .6rem; font-size: .9rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .75rem 0; }
.actions form, td form { display: inline; margin: 0; }
.notice { background: #ecfdf5; border-left: 4px solid #15803d; padding: .75rem 1rem; margin-bottom: 1rem; }
.problem { background: #fef2f2; border-left: 4px solid #b91c1c; padding: .75rem 1rem; margin-bottom: 1rem; }
.secret { background: #fffbeb; border: 2px solid #b45309; border-radius: 6px; padding: .75rem 1rem;
  margin-bottom: 1rem; }
.secret h2 { margin-top: 0; }
.secret code.value { display: block; background: #fff; padding: .35rem .5rem; border: 1px solid #d1d5db;
  margin: .25rem 0 .5rem; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.summary dt { font-weight: 600; }
dl.summary dd { margin: 0; overflow-wrap: anywhere; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; margin-bottom: 1rem; }
.filters .field { margin: 0; }
.signin { max-width: 26rem; margin: 3rem auto; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
@media (max-width: 48rem) {
  .layout { display: block; }
  nav.side { width: auto; border-right: 0; border-bottom: 1px solid #d1d5db; padding: .25rem 0; }
  nav.side h2 { display: none; }
  /* Who is signed in is on "Your account": on a phone the top bar keeps to the switch and "Sign out". */
  .topbar .who { display: none; }
  /* The navigation folds behind "Menu" on a phone, so the page's heading comes first. */
  .navfold > summary { display: list-item; cursor: pointer; padding: .5rem 1rem; font-weight: 700; }
  .navfold:not([open])::details-content { content-visibility: hidden; display: block; }
  /* Rows stack: each cell under its column's name, nothing scrolls sideways. */
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap td { display: block; width: 100%; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .table-wrap tr { border-bottom: 2px solid #d1d5db; padding: .25rem 0; }
  .table-wrap td { border: 0; padding: .2rem .75rem; text-align: left; }
  .table-wrap td.num { text-align: left; }
  .table-wrap td::before { content: attr(data-label); display: block; font-size: .8rem; font-weight: 600;
  color: #4b5563; }
  .table-wrap td[data-label=""]::before { display: none; }
  nav.side ul { display: flex; flex-wrap: wrap; padding: 0 .5rem; }
  nav.side a { padding: .35rem .5rem; }
  nav.side a[aria-current="page"] { border-left: 0; border-bottom: 3px solid #1d4ed8; padding-left: .5rem; }
  main { padding: 1rem; }
  dl.summary { grid-template-columns: 1fr; }
  dl.summary dd { margin-bottom: .5rem; }
}
`;
