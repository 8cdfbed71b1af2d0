import type { Messages } from './messages';

/** German (Switzerland): Swiss spelling, so "ss" instead of "ß"; the formal "Sie". */
export const de: Messages = {
  doc_title: '{page} – {organisation}',
  doc_title_error: 'Fehler: {title}',
  skip_link: 'Zum Hauptinhalt springen',
  language_switcher: 'Sprache',
  portal_name: 'Spendenportal',
  return_to: 'Zurück zu {organisation}',

  continue_title: 'Ihre Spenden an {organisation} verwalten',
  continue_lead:
    'Fahren Sie fort, um Ihre wiederkehrenden Spenden anzusehen und zu ändern. Der Link in Ihrer E-Mail ist einmal verwendbar.',
  continue_button: 'Weiter',

  home_title: 'Ihre Spenden',
  home_greeting: 'Guten Tag {name}',
  home_greeting_anonymous: 'Guten Tag',
  home_lead: 'Sie sind angemeldet und können Ihre Spenden an {organisation} verwalten.',
  home_subscriptions_heading: 'Wiederkehrende Spenden',
  home_subscriptions_empty: 'Hier werden Ihre wiederkehrenden Spenden angezeigt.',
  sign_out: 'Abmelden',

  signed_out_title: 'Sie sind abgemeldet',
  signed_out_text: 'Vielen Dank für Ihre Unterstützung. Um zurückzukehren, fordern Sie einen neuen Link per E-Mail an.',

  login_title: 'Link per E-Mail erhalten',
  login_lead:
    'Geben Sie die E-Mail-Adresse ein, die Sie {organisation} angegeben haben. Gehört sie zu einer Spenderin oder einem Spender, senden wir ihr einen Link zum Spendenportal.',
  login_email_label: 'E-Mail-Adresse',
  login_email_hint: 'Der Link gilt 24 Stunden und ist einmal verwendbar.',
  login_button: 'Link senden',
  login_error_email: 'Geben Sie eine E-Mail-Adresse ein, zum Beispiel name@example.org.',
  error_summary_heading: 'Es gibt ein Problem',

  check_mail_title: 'Prüfen Sie Ihre E-Mails',
  check_mail_text:
    'Gehört {email} zu einer Spenderin oder einem Spender von {organisation}, ist ein Link zum Spendenportal unterwegs. Er gilt 24 Stunden und ist einmal verwendbar.',
  check_mail_hint:
    'Nach einigen Minuten keine E-Mail? Sehen Sie im Spam-Ordner nach, oder prüfen Sie die Adresse und versuchen Sie es erneut.',

  problem_unknown_title: 'Dieser Link ist ungültig',
  problem_unknown_text: 'Wir haben diesen Link nicht gefunden. Bitte verwenden Sie den Link aus Ihrer neuesten E-Mail.',
  problem_used_title: 'Dieser Link wurde bereits verwendet',
  problem_used_text: 'Jeder Link ist einmal verwendbar. Fordern Sie unten einen neuen Link an.',
  problem_expired_title: 'Dieser Link ist abgelaufen',
  problem_expired_text: 'Links gelten 24 Stunden. Fordern Sie unten einen neuen Link an.',
  problem_revoked_title: 'Dieser Link ist nicht mehr gültig',
  problem_revoked_text:
    'Die E-Mail-Adresse, an die er gesendet wurde, hat sich seither geändert. Fordern Sie unten einen neuen Link an.',
  problem_disabled_title: 'Das Spendenportal ist nicht verfügbar',
  problem_disabled_text:
    '{organisation} bietet das Spendenportal zurzeit nicht an. Bitte wenden Sie sich direkt an die Organisation.',
  problem_csrf_title: 'Bitte versuchen Sie es erneut',
  problem_csrf_text:
    'Die Seite war zu lange geöffnet oder das Formular wurde doppelt gesendet. Bitte laden Sie die Seite neu und versuchen Sie es erneut.',
  problem_session_title: 'Ihre Sitzung ist abgelaufen',
  problem_session_text:
    'Zu Ihrer Sicherheit werden Sie nach 30 Minuten ohne Aktivität und spätestens nach 2 Stunden abgemeldet. Fordern Sie einen neuen Link an, um fortzufahren.',
  problem_too_many_title: 'Zu viele Anfragen',
  problem_too_many_text: 'Bitte warten Sie {minutes} Minuten, bevor Sie einen weiteren Link anfordern.',
  problem_failed_title: 'Etwas ist schiefgelaufen',
  problem_failed_text: 'Ihre Anfrage konnte nicht ausgeführt werden. Bitte versuchen Sie es später erneut.',
  problem_no_organisation:
    'Einen neuen Link erhalten Sie über den Link zum Spendenportal auf der Website der Organisation, die Sie unterstützen.',
  reload: 'Seite neu laden',
};
