/**
 * The connect page's style sheet. Colours are custom properties so the contrast test can check
 * them (text ≥ 4.5:1, borders and focus rings ≥ 3:1). Single column, at most 40rem wide.
 */
export const CONNECT_CSS = `:root {
  --bg: #f4f5f7;
  --surface: #ffffff;
  --text: #1b1f24;
  --muted: #4a5360;
  --border: #6b7280;
  --primary: #0a58ca;
  --primary-hover: #084298;
  --on-primary: #ffffff;
  --error: #b3261e;
  --note-bg: #fff4ce;
  --note-border: #8a6100;
  --focus: #0a58ca;
  --radius: 0.5rem;
  color-scheme: light;
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--text);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--primary); text-underline-offset: 0.15em; }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip-link {
  position: absolute; left: 1rem; top: -10rem; z-index: 10;
  background: var(--surface); padding: 0.5rem 1rem; border-radius: var(--radius);
}
.skip-link:focus { top: 1rem; }
.page { max-width: 40rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
.site-header {
  display: flex; flex-wrap: wrap-reverse; align-items: flex-start; justify-content: space-between;
  gap: 0.75rem 1rem; margin-bottom: 1.5rem;
}
.partner { flex: 1 1 18rem; }
.partner-logo {
  display: block; width: 130px; height: 48px; max-width: 100%;
  object-fit: contain; object-position: left center; margin-bottom: 0.75rem;
}
.partner-intro { font-weight: 600; font-size: 1.125rem; margin: 0 0 0.25rem; }
.partner-description { color: var(--muted); margin: 0; }
.languages ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem; margin: 0; padding: 0; }
.languages a {
  display: inline-block; min-width: 2.75rem; padding: 0.25rem 0.5rem;
  border: 1px solid transparent; border-radius: 0.25rem;
}
.languages a[aria-current="true"] {
  color: var(--text); font-weight: 700; text-decoration: none; border-color: var(--border);
}
main {
  background: var(--surface); border-radius: var(--radius); padding: 1.5rem;
  box-shadow: 0 1px 3px rgb(0 0 0 / 12%);
}
main:focus:not(:focus-visible) { outline: none; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0 0 0.75rem; }
.lead { margin: 0 0 1.5rem; }
fieldset { border: 0; margin: 0 0 1.5rem; padding: 0; min-width: 0; }
legend { font-size: 1.25rem; font-weight: 700; padding: 0; margin-bottom: 0.75rem; }
.field { margin-bottom: 1.25rem; }
.field.has-error { border-left: 4px solid var(--error); padding-left: 0.75rem; }
label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.optional { font-weight: 400; color: var(--muted); }
.hint { color: var(--muted); margin: 0 0 0.375rem; }
.field-error, .live { color: var(--error); font-weight: 600; margin: 0 0 0.375rem; }
.live { margin: 0.375rem 0 0; }
.live:empty { display: none; }
input:not([type="hidden"]):not([type="radio"]), select {
  display: block; width: 100%; min-height: 2.75rem; padding: 0.5rem 0.75rem;
  font: inherit; color: var(--text); background: var(--surface);
  border: 2px solid var(--border); border-radius: 0.375rem;
}
input[readonly] { background: var(--bg); border-style: dashed; }
input.width-postal { max-width: 10rem; }
input.width-country { max-width: 6rem; text-transform: uppercase; }
input.width-iban { max-width: 26rem; font-variant-numeric: tabular-nums; letter-spacing: 0.02em; }
[aria-invalid="true"] { border-color: var(--error) !important; }
.password-field { display: flex; gap: 0.5rem; align-items: stretch; }
.password-field input { flex: 1 1 auto; min-width: 0; }
.toggle-password {
  flex: none; font: inherit; font-size: 0.9375rem; cursor: pointer; padding: 0 0.75rem;
  color: var(--primary); background: var(--surface);
  border: 2px solid var(--primary); border-radius: 0.375rem;
}
.radio { display: flex; align-items: center; gap: 0.75rem; padding: 0.375rem 0; }
.radio input { flex: none; width: 1.5rem; height: 1.5rem; margin: 0; accent-color: var(--primary); }
.radio label { font-weight: 400; margin: 0; }
.error-summary {
  border: 3px solid var(--error); border-radius: var(--radius);
  padding: 1rem 1.25rem; margin-bottom: 1.5rem;
}
.error-summary h2 { font-size: 1.25rem; margin: 0 0 0.5rem; }
.error-summary ul { margin: 0; padding-left: 1.25rem; }
.error-summary a { color: var(--error); font-weight: 600; }
.note {
  background: var(--note-bg); border-left: 4px solid var(--note-border);
  padding: 0.75rem 1rem; margin: 0 0 1.25rem;
}
.captcha { margin-bottom: 1.25rem; }
.actions { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; margin-top: 1.5rem; }
.button {
  display: inline-flex; align-items: center; gap: 0.5rem; min-height: 2.75rem;
  padding: 0.625rem 1.25rem; font: inherit; font-weight: 600; text-decoration: none; cursor: pointer;
  color: var(--on-primary); background: var(--primary);
  border: 2px solid transparent; border-radius: 0.375rem;
}
.button:hover { background: var(--primary-hover); color: var(--on-primary); }
.button:disabled, .button[aria-disabled="true"] { cursor: progress; }
.button.is-busy::before {
  content: ""; width: 1em; height: 1em; border-radius: 50%;
  border: 2px solid currentColor; border-right-color: transparent;
  animation: connect-spin 0.8s linear infinite;
}
@keyframes connect-spin { to { transform: rotate(360deg); } }
.site-footer { margin-top: 1.5rem; }
@media (max-width: 30rem) {
  .page { padding: 1rem 0.5rem 2rem; }
  main { padding: 1rem; }
  h1 { font-size: 1.5rem; }
  .button { width: 100%; justify-content: center; }
}
@media (prefers-reduced-motion: reduce) {
  .button.is-busy::before { animation: none; }
}
@media (forced-colors: active) {
  .button, .toggle-password, .error-summary { border-color: ButtonText; }
  [aria-invalid="true"] { border-style: double; }
}
`;
