import type { Messages } from './messages';

/** Italian (Switzerland): courtesy form (Lei), Swiss terms (NPA, località). */
export const it_CH: Messages = {
  doc_title: '{step} – {partner}',
  doc_title_error: 'Errore: {title}',
  skip_link: 'Vai al contenuto principale',
  intro: '{partner} desidera collegarsi alla sua organizzazione.',
  language_switcher: 'Lingua',
  return_to: 'Torna a {label}',
  optional: 'facoltativo',
  continue: 'Continua',
  busy: 'Attendere prego…',
  error_summary_heading: 'Correggere i seguenti dati',

  email_title: 'Collegare la sua organizzazione',
  email_lead:
    'Inserisca il suo indirizzo e-mail per iniziare. Se ha già un account, potrà collegare una delle sue organizzazioni. Altrimenti creerà una nuova organizzazione.',
  email_label: 'Indirizzo e-mail',
  captcha_test_note:
    'Modalità di test: la verifica di sicurezza (captcha) è simulata e viene superata automaticamente.',
  captcha_prompt: 'Confermi di non essere un robot.',
  captcha_requires_js:
    'La verifica di sicurezza richiede JavaScript. Attivi JavaScript nel browser e ricarichi la pagina.',

  onboard_title: 'Creare la sua organizzazione',
  onboard_lead:
    'Verifichi i dati qui sotto e completi quelli mancanti. La sua organizzazione verrà poi creata e collegata a {partner}.',
  section_user: 'I suoi dati',
  section_organisation: 'Organizzazione',
  section_address: 'Indirizzo',
  section_bank: 'Conto bancario',
  first_name_label: 'Nome',
  last_name_label: 'Cognome',
  user_locale_label: 'Lingua preferita',
  password_label: 'Password',
  password_hint: 'Almeno {min} caratteri.',
  password_confirmation_label: 'Conferma password',
  password_show: 'Mostra password',
  password_hide: 'Nascondi password',
  organisation_name_label: 'Nome dell’organizzazione',
  mcc_label: 'Tipo di organizzazione',
  mcc_choose: 'Selezionare',
  mcc_8699: 'Organizzazione associativa',
  mcc_7997: 'Club con soci (sport, tempo libero, atletica)',
  mcc_8398: 'Organizzazione di beneficenza o di assistenza sociale',
  mcc_8641: 'Associazione civica o sociale',
  mcc_8651: 'Organizzazione politica',
  mcc_8661: 'Organizzazione religiosa',
  mcc_0000: 'Altro (non un’organizzazione di beneficenza)',
  address_line1_label: 'Via e numero civico',
  address_line2_label: 'Complemento d’indirizzo',
  postal_code_label: 'NPA',
  city_label: 'Località',
  country_label: 'Paese',
  country_hint: 'Codice del paese di due lettere, ad es. CH per la Svizzera.',
  iban_label: 'IBAN',
  iban_hint: 'Ad esempio CH93 0076 2011 6238 5295 7',
  bank_name_label: 'Nome della banca',
  account_holder_label: 'Titolare del conto',
  onboard_submit: 'Crea organizzazione e collega',

  signin_title: 'Accesso',
  signin_lead: 'Esiste già un account per {email}. Acceda per collegare {partner} a una delle sue organizzazioni.',
  signin_submit: 'Accedi',

  pick_title: 'Scegliere un’organizzazione',
  pick_lead: 'Quale organizzazione desidera collegare a {partner}?',
  pick_legend: 'Le sue organizzazioni',
  pick_submit: 'Collega',

  error_required: 'Compili questo campo.',
  error_choose: 'Selezioni un’opzione.',
  error_email: 'Inserisca un indirizzo e-mail valido, ad es. nome@example.ch.',
  error_iban: 'Inserisca un IBAN valido.',
  error_country: 'Inserisca un codice del paese di due lettere, ad es. CH.',
  error_password_short: 'La password deve contenere almeno {min} caratteri.',
  error_passwords_differ: 'Le password non corrispondono.',
  error_credentials: 'L’indirizzo e-mail o la password non sono corretti.',
  error_no_organisations: 'Al suo account non è associata alcuna organizzazione che possa essere collegata.',
  error_captcha: 'La verifica di sicurezza non è riuscita. Riprovi.',

  problem_unknown_title: 'Link non trovato',
  problem_unknown_text:
    'Questo link di collegamento non è valido. Verifichi il link o ricominci il collegamento dall’applicazione da cui proviene.',
  problem_expired_title: 'Questo link è scaduto',
  problem_expired_text:
    'Per motivi di sicurezza, i link di collegamento sono validi solo per un periodo limitato. Ricominci il collegamento dall’applicazione da cui proviene.',
  problem_used_title: 'Questo link è già stato utilizzato',
  problem_used_text:
    'Il collegamento tramite questo link è già stato completato. Per collegarsi di nuovo, ricominci dall’applicazione da cui proviene.',
  problem_csrf_title: 'La sessione è scaduta',
  problem_csrf_text:
    'Il modulo è rimasto aperto troppo a lungo o è stato inviato due volte. Ricarichi la pagina e riprovi.',
  problem_failed_title: 'Si è verificato un errore',
  problem_failed_text: 'Non è stato possibile completare la richiesta. Riprovi più tardi.',
  try_again: 'Riprova',
};
