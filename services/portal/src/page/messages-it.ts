import type { Messages } from './messages';

/** Italian (Switzerland): the formal "Lei". */
export const it: Messages = {
  doc_title: '{page} – {organisation}',
  doc_title_error: 'Errore: {title}',
  skip_link: 'Vai al contenuto principale',
  language_switcher: 'Lingua',
  portal_name: 'Portale dei donatori',
  return_to: 'Torna a {organisation}',

  continue_title: 'Gestire le sue donazioni a {organisation}',
  continue_lead:
    'Continui per vedere e modificare le sue donazioni ricorrenti. Il link nella sua e-mail si usa una sola volta.',
  continue_button: 'Continua',

  home_title: 'Le sue donazioni',
  home_greeting: 'Buongiorno {name}',
  home_greeting_anonymous: 'Buongiorno',
  home_lead: 'Ha effettuato l’accesso e può gestire le sue donazioni a {organisation}.',
  home_subscriptions_heading: 'Donazioni ricorrenti',
  home_subscriptions_empty: 'Qui saranno mostrate le sue donazioni ricorrenti.',
  sign_out: 'Esci',

  signed_out_title: 'È uscito dal portale',
  signed_out_text: 'Grazie per il suo sostegno. Per tornare, richieda un nuovo link per e-mail.',

  login_title: 'Ricevere un link per e-mail',
  login_lead:
    "Inserisca l'indirizzo e-mail che ha indicato a {organisation}. Se appartiene a un donatore o una donatrice, le invieremo un link al portale dei donatori.",
  login_email_label: 'Indirizzo e-mail',
  login_email_hint: 'Il link è valido 24 ore e si usa una sola volta.',
  login_button: 'Inviami un link',
  login_error_email: 'Inserisca un indirizzo e-mail, per esempio nome@example.org.',
  error_summary_heading: "C'è un problema",

  check_mail_title: 'Controlli la sua e-mail',
  check_mail_text:
    'Se {email} appartiene a un donatore o una donatrice di {organisation}, un link al portale dei donatori è in arrivo. È valido 24 ore e si usa una sola volta.',
  check_mail_hint:
    "Nessuna e-mail dopo qualche minuto? Guardi nella cartella dello spam, oppure verifichi l'indirizzo e riprovi.",

  problem_unknown_title: 'Questo link non è valido',
  problem_unknown_text: 'Non abbiamo trovato questo link. Usi il link della sua e-mail più recente.',
  problem_used_title: 'Questo link è già stato usato',
  problem_used_text: 'Ogni link si usa una sola volta. Richieda un nuovo link qui sotto.',
  problem_expired_title: 'Questo link è scaduto',
  problem_expired_text: 'I link sono validi 24 ore. Richieda un nuovo link qui sotto.',
  problem_revoked_title: 'Questo link non è più valido',
  problem_revoked_text:
    "L'indirizzo e-mail a cui è stato inviato è cambiato nel frattempo. Richieda un nuovo link qui sotto.",
  problem_disabled_title: 'Il portale dei donatori non è disponibile',
  problem_disabled_text:
    "{organisation} al momento non offre il portale dei donatori. La preghiamo di contattare direttamente l'organizzazione.",
  problem_csrf_title: 'Riprovi, per favore',
  problem_csrf_text:
    'La pagina è rimasta aperta troppo a lungo o il modulo è stato inviato due volte. Ricarichi la pagina e riprovi.',
  problem_session_title: 'La sua sessione è terminata',
  problem_session_text:
    'Per la sua sicurezza, viene disconnesso dopo 30 minuti di inattività e al più tardi dopo 2 ore. Richieda un nuovo link per continuare.',
  problem_too_many_title: 'Troppe richieste',
  problem_too_many_text: 'Attenda {minutes} minuti prima di richiedere un altro link.',
  problem_failed_title: 'Qualcosa è andato storto',
  problem_failed_text: 'Non è stato possibile completare la sua richiesta. Riprovi più tardi.',
  problem_no_organisation:
    "Per ricevere un nuovo link, usi il link al portale dei donatori sul sito dell'organizzazione che sostiene.",
  reload: 'Ricarica la pagina',
};
