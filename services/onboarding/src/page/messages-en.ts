/**
 * English (United Kingdom) texts of the hosted connect page. This catalogue defines the set of
 * message keys: every other locale is typed against it, so a missing or extra key is a compile
 * error. Placeholders are written `{name}` and filled by `format`.
 */
export const en_GB = {
  doc_title: '{step} – {partner}',
  doc_title_error: 'Error: {title}',
  skip_link: 'Skip to main content',
  intro: '{partner} would like to connect to your organisation.',
  language_switcher: 'Language',
  return_to: 'Return to {label}',
  optional: 'optional',
  continue: 'Continue',
  busy: 'Please wait…',
  error_summary_heading: 'Please correct the following',

  email_title: 'Connect your organisation',
  email_lead:
    'Enter your e-mail address to get started. If you already have an account, you can connect one of your organisations. Otherwise you will set up a new organisation.',
  email_label: 'E-mail address',
  captcha_test_note: 'Test mode: the security check (captcha) is simulated and passes automatically.',
  captcha_prompt: 'Please confirm that you are not a robot.',
  captcha_requires_js:
    'The security check requires JavaScript. Please enable JavaScript in your browser and reload the page.',

  onboard_title: 'Create your organisation',
  onboard_lead:
    'Please check the details below and complete anything that is missing. Your organisation will then be created and connected to {partner}.',
  section_user: 'Your details',
  section_organisation: 'Organisation',
  section_address: 'Address',
  section_bank: 'Bank account',
  first_name_label: 'First name',
  last_name_label: 'Last name',
  user_locale_label: 'Preferred language',
  password_label: 'Password',
  password_hint: 'At least {min} characters.',
  password_confirmation_label: 'Confirm password',
  password_show: 'Show password',
  password_hide: 'Hide password',
  organisation_name_label: 'Name of the organisation',
  mcc_label: 'Type of organisation',
  mcc_choose: 'Please choose',
  mcc_8699: 'Membership organisation',
  mcc_7997: 'Membership club (sports, recreation, athletics)',
  mcc_8398: 'Charitable or social service organisation',
  mcc_8641: 'Civic or social association',
  mcc_8651: 'Political organisation',
  mcc_8661: 'Religious organisation',
  mcc_0000: 'Other (not a charity)',
  address_line1_label: 'Street and number',
  address_line2_label: 'Address line 2',
  postal_code_label: 'Postcode',
  city_label: 'Town or city',
  country_label: 'Country',
  country_hint: 'Two-letter country code, e.g. CH for Switzerland.',
  iban_label: 'IBAN',
  iban_hint: 'For example CH93 0076 2011 6238 5295 7',
  bank_name_label: 'Name of the bank',
  account_holder_label: 'Account holder',
  onboard_submit: 'Create organisation and connect',

  signin_title: 'Sign in',
  signin_lead: 'There is already an account for {email}. Sign in to connect {partner} to one of your organisations.',
  signin_submit: 'Sign in',

  pick_title: 'Choose an organisation',
  pick_lead: 'Which organisation would you like to connect to {partner}?',
  pick_legend: 'Your organisations',
  pick_submit: 'Connect',

  error_required: 'Please fill in this field.',
  error_choose: 'Please choose an option.',
  error_email: 'Please enter a valid e-mail address, e.g. name@example.ch.',
  error_iban: 'Please enter a valid IBAN.',
  error_country: 'Please enter a two-letter country code, e.g. CH.',
  error_password_short: 'The password must be at least {min} characters long.',
  error_passwords_differ: 'The passwords do not match.',
  error_credentials: 'The e-mail address or password is incorrect.',
  error_no_organisations: 'Your account has no organisation that can be connected.',
  error_captcha: 'The security check failed. Please try again.',

  problem_unknown_title: 'Link not found',
  problem_unknown_text:
    'This connection link is not valid. Please check the link or start the connection again from the application you came from.',
  problem_expired_title: 'This link has expired',
  problem_expired_text:
    'For security reasons, connection links are only valid for a limited time. Please start the connection again from the application you came from.',
  problem_used_title: 'This link has already been used',
  problem_used_text:
    'The connection for this link has already been completed. To connect again, please start again from the application you came from.',
  problem_csrf_title: 'Your session has expired',
  problem_csrf_text: 'The form was open for too long or was sent twice. Please reload the page and try again.',
  problem_failed_title: 'Something went wrong',
  problem_failed_text: 'Your request could not be completed. Please try again later.',
  try_again: 'Try again',
} as const satisfies Record<string, string>;
