import type { Messages } from './messages';

/** German (Switzerland): Swiss spelling, so "ss" instead of "ß". */
export const de_CH: Messages = {
  doc_title: '{step} – {partner}',
  doc_title_error: 'Fehler: {title}',
  skip_link: 'Zum Hauptinhalt springen',
  intro: '{partner} möchte sich mit Ihrer Organisation verbinden.',
  language_switcher: 'Sprache',
  return_to: 'Zurück zu {label}',
  optional: 'optional',
  continue: 'Weiter',
  busy: 'Bitte warten…',
  error_summary_heading: 'Bitte korrigieren Sie Folgendes',

  email_title: 'Organisation verbinden',
  email_lead:
    'Geben Sie Ihre E-Mail-Adresse ein, um zu beginnen. Wenn Sie bereits ein Konto haben, können Sie eine Ihrer Organisationen verbinden. Andernfalls richten Sie eine neue Organisation ein.',
  email_label: 'E-Mail-Adresse',
  captcha_test_note: 'Testmodus: Die Sicherheitsprüfung (Captcha) wird simuliert und automatisch bestanden.',
  captcha_prompt: 'Bitte bestätigen Sie, dass Sie kein Roboter sind.',
  captcha_requires_js:
    'Für die Sicherheitsprüfung wird JavaScript benötigt. Bitte aktivieren Sie JavaScript in Ihrem Browser und laden Sie die Seite neu.',

  onboard_title: 'Organisation erstellen',
  onboard_lead:
    'Bitte prüfen Sie die folgenden Angaben und ergänzen Sie, was noch fehlt. Anschliessend wird Ihre Organisation erstellt und mit {partner} verbunden.',
  section_user: 'Ihre Angaben',
  section_organisation: 'Organisation',
  section_address: 'Adresse',
  section_bank: 'Bankkonto',
  first_name_label: 'Vorname',
  last_name_label: 'Nachname',
  user_locale_label: 'Bevorzugte Sprache',
  password_label: 'Passwort',
  password_hint: 'Mindestens {min} Zeichen.',
  password_confirmation_label: 'Passwort bestätigen',
  password_show: 'Passwort anzeigen',
  password_hide: 'Passwort verbergen',
  organisation_name_label: 'Name der Organisation',
  mcc_label: 'Art der Organisation',
  mcc_choose: 'Bitte wählen',
  mcc_8699: 'Mitgliederorganisation',
  mcc_7997: 'Verein mit Mitgliedschaft (Sport, Freizeit, Athletik)',
  mcc_8398: 'Gemeinnützige oder soziale Organisation',
  mcc_8641: 'Bürger- oder Sozialverband',
  mcc_8651: 'Politische Organisation',
  mcc_8661: 'Religiöse Organisation',
  mcc_0000: 'Andere (keine gemeinnützige Organisation)',
  address_line1_label: 'Strasse und Hausnummer',
  address_line2_label: 'Adresszusatz',
  postal_code_label: 'PLZ',
  city_label: 'Ort',
  country_label: 'Land',
  country_hint: 'Zweistelliger Ländercode, z. B. CH für die Schweiz.',
  iban_label: 'IBAN',
  iban_hint: 'Zum Beispiel CH93 0076 2011 6238 5295 7',
  bank_name_label: 'Name der Bank',
  account_holder_label: 'Kontoinhaber/in',
  onboard_submit: 'Organisation erstellen und verbinden',

  signin_title: 'Anmelden',
  signin_lead:
    'Für {email} besteht bereits ein Konto. Melden Sie sich an, um {partner} mit einer Ihrer Organisationen zu verbinden.',
  signin_submit: 'Anmelden',

  pick_title: 'Organisation auswählen',
  pick_lead: 'Welche Organisation möchten Sie mit {partner} verbinden?',
  pick_legend: 'Ihre Organisationen',
  pick_submit: 'Verbinden',

  error_required: 'Bitte füllen Sie dieses Feld aus.',
  error_choose: 'Bitte wählen Sie eine Option.',
  error_email: 'Bitte geben Sie eine gültige E-Mail-Adresse ein, z. B. name@example.ch.',
  error_iban: 'Bitte geben Sie eine gültige IBAN ein.',
  error_country: 'Bitte geben Sie einen zweistelligen Ländercode ein, z. B. CH.',
  error_password_short: 'Das Passwort muss mindestens {min} Zeichen lang sein.',
  error_passwords_differ: 'Die Passwörter stimmen nicht überein.',
  error_credentials: 'E-Mail-Adresse oder Passwort ist falsch.',
  error_too_many_attempts: 'Zu viele Versuche. Bitte warten Sie einige Minuten und versuchen Sie es dann erneut.',
  error_no_organisations: 'Zu Ihrem Konto gibt es keine Organisation, die verbunden werden kann.',
  error_captcha: 'Die Sicherheitsprüfung ist fehlgeschlagen. Bitte versuchen Sie es erneut.',
  error_already_connected: 'Diese Organisation ist bereits mit {partner} verbunden.',
  error_not_member: 'Mit Ihrem Konto können Sie diese Organisation nicht verbinden.',
  error_user_exists:
    'Für diese E-Mail-Adresse gibt es bereits ein Konto. Bitte beginnen Sie erneut und melden Sie sich an.',

  problem_unknown_title: 'Link nicht gefunden',
  problem_unknown_text:
    'Dieser Verbindungslink ist ungültig. Bitte prüfen Sie den Link oder starten Sie die Verbindung erneut in der Anwendung, von der Sie gekommen sind.',
  problem_expired_title: 'Dieser Link ist abgelaufen',
  problem_expired_text:
    'Aus Sicherheitsgründen sind Verbindungslinks nur begrenzte Zeit gültig. Bitte starten Sie die Verbindung erneut in der Anwendung, von der Sie gekommen sind.',
  problem_used_title: 'Dieser Link wurde bereits verwendet',
  problem_used_text:
    'Die Verbindung über diesen Link wurde bereits abgeschlossen. Um erneut zu verbinden, starten Sie bitte wieder in der Anwendung, von der Sie gekommen sind.',
  problem_csrf_title: 'Ihre Sitzung ist abgelaufen',
  problem_csrf_text:
    'Das Formular war zu lange geöffnet oder wurde doppelt gesendet. Bitte laden Sie die Seite neu und versuchen Sie es erneut.',
  problem_failed_title: 'Etwas ist schiefgelaufen',
  problem_failed_text: 'Ihre Anfrage konnte nicht abgeschlossen werden. Bitte versuchen Sie es später erneut.',
  try_again: 'Erneut versuchen',
};
