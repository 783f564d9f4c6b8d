/**
 * The one stylesheet of the hosted pages (served at /hosted/assets/screen.css; the CSP allows no
 * other). System fonts, large type, high contrast (text 4.5:1 or better), visible focus, one
 * column that fits a phone and an embedding frame. No external asset.
 */
export const stylesheet =
  `
*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; ` +
  `font-size: 100%; line-height: 1.5; color: #1b1b1b; background: #f3f4f6; }
body { margin: 0; padding: 1rem; }
.merchant { max-width: 40rem; margin: 0 auto .5rem; color: #374151; }
.merchant p { margin: 0; }
.merchant-logo { display: block; max-height: 3rem; max-width: 12rem; margin-bottom: .25rem; }
.screen { max-width: 40rem; margin: 0 auto; background: #fff; border: 1px solid #d1d5db; border-radius: 8px; ` +
  `padding: 1.5rem; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0 0 1rem; }
h2 { font-size: 1.25rem; margin: 0 0 0.5rem; }
p { margin: 0 0 1rem; }
a { color: #1d4ed8; }
a:focus, button:focus, input:focus, select:focus { outline: 3px solid #f59e0b; outline-offset: 2px; }
fieldset { border: 0; padding: 0; margin: 0 0 1.5rem; min-width: 0; }
legend { font-size: 1.25rem; font-weight: 700; padding: 0; margin-bottom: 0.75rem; }
.field { margin-bottom: 1.25rem; }
.field--error { border-left: 4px solid #b91c1c; padding-left: 0.75rem; }
label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.optional { font-weight: 400; color: #4b5563; }
.hint { color: #4b5563; margin: 0 0 0.5rem; font-size: 0.95rem; }
.kept { color: #065f46; margin: 0 0 0.5rem; font-size: 0.95rem; }
.field-error { color: #b91c1c; font-weight: 600; margin: 0 0 0.5rem; }
input[type="text"], input[type="date"], input[type="email"], input[type="tel"], select {
  display: block; width: 100%; max-width: 28rem; font: inherit; padding: 0.5rem 0.625rem; ` +
  `border: 2px solid #4b5563; border-radius: 4px; background: #fff; color: inherit; }
input[readonly] { background: #f3f4f6; }
input[type="file"] { font: inherit; max-width: 100%; }
[aria-invalid="true"] { border-color: #b91c1c; }
.actions { margin-top: 1.5rem; }
button { font: inherit; font-weight: 700; color: #fff; background: #15803d; border: 2px solid #166534; ` +
  `border-radius: 4px; padding: 0.625rem 1.25rem; cursor: pointer; }
button:hover { background: #166534; }
.error-summary { border: 4px solid #b91c1c; border-radius: 4px; padding: 1rem; margin-bottom: 1.5rem; }
.error-summary ul { margin: 0; padding-left: 1.25rem; }
.error-summary a { color: #b91c1c; font-weight: 600; }
.summary { margin: 0 0 1.5rem; }
.summary div { display: flex; flex-wrap: wrap; gap: 0 1rem; padding: 0.5rem 0; border-bottom: 1px solid #e5e7eb; }
.summary dt { font-weight: 600; min-width: 10rem; }
.summary dd { margin: 0; }
.notice { background: #ecfdf5; border-left: 4px solid #15803d; padding: 0.75rem 1rem; margin-bottom: 1rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; ` +
  `clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
@media (max-width: 30rem) { body { padding: 0; } .screen { border: 0; border-radius: 0; padding: 1rem; } }
`;
