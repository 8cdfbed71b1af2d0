import { isoExponent } from '@svc/core';

/** The simulated provider's approval page: a real form that works without JavaScript. */
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function approvalPage(options: {
  title: string;
  amount: string;
  currency: string;
  method: string;
  actionUrl: string;
  token: string;
  status: string;
}): string {
  const pending = options.status === 'pending';
  const decide = pending
    ? `<form method="post" action="${escapeHtml(options.actionUrl)}">
  <input type="hidden" name="token" value="${escapeHtml(options.token)}">
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="decline">Decline</button>
</form>`
    : `<p role="status">This ${escapeHtml(options.method)} request is already <strong>${escapeHtml(options.status)}</strong>.</p>`;
  // Minor units in the currency's ISO 4217 exponent: 500 JPY is JPY 500, 1234 KWD is KWD 1.234.
  const exponent = isoExponent(options.currency) ?? 2;
  const major = (Number(options.amount) / 10 ** exponent).toFixed(exponent);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
button{font-size:1rem;padding:.6rem 1.2rem;margin-right:.5rem}</style></head>
<body><main><h1>${escapeHtml(options.title)}</h1>
<p>Simulated provider: ${escapeHtml(options.method)} for <strong>${escapeHtml(options.currency)} ${escapeHtml(major)}</strong> (${escapeHtml(options.amount)} minor units).</p>
${decide}
</main></body></html>`;
}

/** Where the donor goes after deciding: the payment's return_url with the outcome, if any. */
export function afterDecision(returnUrl: string | undefined, query: Record<string, string>): string | undefined {
  if (!returnUrl) return undefined;
  const url = new URL(returnUrl);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.toString();
}
