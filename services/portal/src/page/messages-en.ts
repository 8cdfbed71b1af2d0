/**
 * English texts of the donor portal's pages. This catalogue defines the message keys: every other
 * locale is typed against it, so a missing or extra key does not compile. Placeholders are
 * written `{name}` and filled by `format`; texts are plain (the templates escape them).
 */
export const en = {
  doc_title: '{page} – {organisation}',
  doc_title_error: 'Error: {title}',
  skip_link: 'Skip to main content',
  language_switcher: 'Language',
  portal_name: 'Donor portal',
  return_to: 'Back to {organisation}',

  continue_title: 'Manage your donations to {organisation}',
  continue_lead: 'Continue to see and change your recurring donations. The link in your e-mail can be used once.',
  continue_button: 'Continue',

  home_title: 'Your donations',
  home_greeting: 'Hello {name}',
  home_greeting_anonymous: 'Hello',
  home_lead: 'You are signed in to manage your donations to {organisation}.',
  home_subscriptions_heading: 'Recurring donations',
  home_subscriptions_empty: 'Your recurring donations will be shown here.',
  sign_out: 'Sign out',

  signed_out_title: 'You are signed out',
  signed_out_text: 'Thank you for your support. To come back, ask for a new link by e-mail.',

  login_title: 'Get a link by e-mail',
  login_lead:
    'Enter the e-mail address you gave {organisation}. If it belongs to a donor, we will send a link to the donor portal to it.',
  login_email_label: 'E-mail address',
  login_email_hint: 'The link is valid for 24 hours and can be used once.',
  login_button: 'Send me a link',
  login_error_email: 'Enter an e-mail address, such as name@example.org.',
  error_summary_heading: 'There is a problem',

  check_mail_title: 'Check your e-mail',
  check_mail_text:
    'If {email} belongs to a donor of {organisation}, a link to the donor portal is on its way. It is valid for 24 hours and can be used once.',
  check_mail_hint: 'No e-mail after a few minutes? Look in your spam folder, or check the address and try again.',

  problem_unknown_title: 'This link is not valid',
  problem_unknown_text: 'We could not find this link. Please use the link from your most recent e-mail.',
  problem_used_title: 'This link has already been used',
  problem_used_text: 'Each link can be used once. Ask for a new link below.',
  problem_expired_title: 'This link has expired',
  problem_expired_text: 'Links are valid for 24 hours. Ask for a new link below.',
  problem_revoked_title: 'This link is no longer valid',
  problem_revoked_text: 'The e-mail address it was sent to has changed since. Ask for a new link below.',
  problem_disabled_title: 'The donor portal is not available',
  problem_disabled_text: '{organisation} does not offer the donor portal at the moment. Please contact them directly.',
  problem_csrf_title: 'Please try again',
  problem_csrf_text: 'The page was open for too long or the form was sent twice. Please reload the page and try again.',
  problem_session_title: 'Your session has ended',
  problem_session_text:
    'For your security you are signed out after 30 minutes without activity, and after 2 hours at most. Ask for a new link to continue.',
  problem_too_many_title: 'Too many requests',
  problem_too_many_text: 'Please wait {minutes} minutes before you ask for another link.',
  problem_failed_title: 'Something went wrong',
  problem_failed_text: 'Your request could not be completed. Please try again later.',
  problem_no_organisation:
    'To get a new link, use the donor portal link on the website of the organisation you support.',
  reload: 'Reload the page',
};
