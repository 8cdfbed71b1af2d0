import { textColourOn } from './contrast';

/**
 * The portal pages' style sheet, in the page itself (no asset route): its SHA-256 is named in the
 * page's Content-Security-Policy, so no other inline style runs. The organisation's colour fills
 * the header band and the main buttons, with black or white text on it by WCAG contrast
 * (contrast.ts); everything else keeps fixed colours that pass 4.5:1 on the page's white. Focus
 * is a dark ring with a white gap, visible on any brand colour and on white.
 */
export function portalStyle(brandColour: string): string {
  return `:root {
  --brand: ${brandColour};
  --on-brand: ${textColourOn(brandColour)};
  --bg: #ffffff;
  --text: #1b1f24;
  --muted: #4a5360;
  --border: #6b7280;
  --link: #0b57d0;
  --error: #b3261e;
  --focus: #111111;
  color-scheme: light;
}
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--link); text-underline-offset: 0.15em; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; box-shadow: 0 0 0 2px #ffffff; }
.skip-link { position: absolute; left: 1rem; top: -10rem; background: var(--bg); padding: 0.5rem 1rem; }
.skip-link:focus { top: 1rem; }
.brand { background: var(--brand); color: var(--on-brand); }
.brand-inner, .page { max-width: 40rem; margin: 0 auto; padding: 1rem; }
.brand-inner { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; justify-content: space-between; }
.brand-name { font-weight: 700; font-size: 1.25rem; margin: 0; }
.brand a { color: var(--on-brand); }
.languages ul { list-style: none; display: flex; gap: 0.75rem; margin: 0; padding: 0; }
.languages a[aria-current] { font-weight: 700; text-decoration: none; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 1.5rem 0 1rem; }
h2 { font-size: 1.25rem; margin: 1.5rem 0 0.5rem; }
.lead { font-size: 1.125rem; }
.muted { color: var(--muted); }
form { margin: 1.5rem 0; }
label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.hint { color: var(--muted); margin: 0 0 0.5rem; }
input[type="email"], input[type="text"], input[type="number"], input[type="date"], select, textarea {
  display: block; width: 100%; max-width: 24rem; padding: 0.5rem; font: inherit; color: var(--text);
  background: var(--bg); border: 2px solid var(--border); border-radius: 0.25rem; margin-bottom: 0.75rem; }
input[size] { width: auto; }
input[aria-invalid="true"], select[aria-invalid="true"] { border-color: var(--error); }
.checkbox { display: flex; gap: 0.5rem; align-items: flex-start; margin: 0 0 0.75rem; }
.checkbox input { width: 1.25rem; height: 1.25rem; margin: 0.125rem 0 0; flex: none; }
.checkbox label { display: inline; font-weight: 400; }
fieldset { border: 1px solid var(--border); border-radius: 0.25rem; margin: 0 0 1rem; padding: 0.75rem 1rem; }
fieldset.inline { display: flex; flex-wrap: wrap; gap: 0 1rem; }
legend { font-weight: 600; padding: 0 0.25rem; }
.change { border-top: 1px solid var(--border); margin-top: 1.5rem; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0.5rem 0 1rem; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; }
.subscriptions { list-style: none; padding: 0; }
.subscriptions li { border: 1px solid var(--border); border-radius: 0.25rem; padding: 0 1rem; margin: 0 0 1rem; }
h3 { font-size: 1.125rem; margin: 1rem 0 0.5rem; }
.notice { border-left: 6px solid #1e7d34; background: #eef7f0; padding: 0.75rem 1rem; font-weight: 600; }
a.button { display: inline-block; padding: 0.625rem 1.25rem; font-weight: 600; border-radius: 0.25rem;
  background: var(--brand); color: var(--on-brand); text-decoration: none; }
button.danger { background: var(--error); border-color: var(--error); color: #ffffff; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.5rem; border-bottom: 1px solid var(--border); }
th.number, td.number { text-align: right; }
.years ul { list-style: none; display: flex; gap: 1.5rem; padding: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.error { color: var(--error); font-weight: 600; margin: 0 0 0.5rem; }
.error-summary { border: 3px solid var(--error); padding: 0.75rem 1rem; margin: 1rem 0; }
button { margin-top: 1rem; padding: 0.625rem 1.25rem; font: inherit; font-weight: 600; cursor: pointer;
  border-radius: 0.25rem; border: 2px solid var(--brand); background: var(--brand); color: var(--on-brand); }
button.secondary { background: var(--bg); color: var(--text); border-color: var(--border); }
footer { border-top: 1px solid var(--border); margin-top: 2rem; padding-top: 1rem; }
`;
}
