import type { Messages } from './messages';

/** French (Switzerland). */
export const fr: Messages = {
  doc_title: '{page} – {organisation}',
  doc_title_error: 'Erreur : {title}',
  skip_link: 'Aller au contenu principal',
  language_switcher: 'Langue',
  portal_name: 'Portail des donateurs',
  return_to: 'Retour à {organisation}',

  continue_title: 'Gérer vos dons à {organisation}',
  continue_lead:
    "Continuez pour voir et modifier vos dons réguliers. Le lien de votre e-mail ne s'utilise qu'une fois.",
  continue_button: 'Continuer',

  home_title: 'Vos dons',
  home_greeting: 'Bonjour {name}',
  home_greeting_anonymous: 'Bonjour',
  home_lead: 'Vous êtes connecté·e et pouvez gérer vos dons à {organisation}.',
  home_subscriptions_heading: 'Dons réguliers',
  home_subscriptions_empty: 'Vos dons réguliers seront affichés ici.',
  sign_out: 'Se déconnecter',

  signed_out_title: 'Vous êtes déconnecté·e',
  signed_out_text: 'Merci de votre soutien. Pour revenir, demandez un nouveau lien par e-mail.',

  login_title: 'Recevoir un lien par e-mail',
  login_lead:
    "Saisissez l'adresse e-mail que vous avez donnée à {organisation}. Si elle appartient à un donateur ou une donatrice, nous y enverrons un lien vers le portail des donateurs.",
  login_email_label: 'Adresse e-mail',
  login_email_hint: "Le lien est valable 24 heures et ne s'utilise qu'une fois.",
  login_button: "M'envoyer un lien",
  login_error_email: 'Saisissez une adresse e-mail, par exemple nom@example.org.',
  error_summary_heading: 'Il y a un problème',

  check_mail_title: 'Consultez vos e-mails',
  check_mail_text:
    "Si {email} appartient à un donateur ou une donatrice de {organisation}, un lien vers le portail des donateurs est en route. Il est valable 24 heures et ne s'utilise qu'une fois.",
  check_mail_hint:
    "Pas d'e-mail après quelques minutes ? Regardez dans vos indésirables, ou vérifiez l'adresse et réessayez.",

  problem_unknown_title: "Ce lien n'est pas valable",
  problem_unknown_text: "Nous n'avons pas trouvé ce lien. Veuillez utiliser le lien de votre e-mail le plus récent.",
  problem_used_title: 'Ce lien a déjà été utilisé',
  problem_used_text: "Chaque lien ne s'utilise qu'une fois. Demandez un nouveau lien ci-dessous.",
  problem_expired_title: 'Ce lien a expiré',
  problem_expired_text: 'Les liens sont valables 24 heures. Demandez un nouveau lien ci-dessous.',
  problem_revoked_title: "Ce lien n'est plus valable",
  problem_revoked_text:
    "L'adresse e-mail à laquelle il a été envoyé a changé depuis. Demandez un nouveau lien ci-dessous.",
  problem_disabled_title: "Le portail des donateurs n'est pas disponible",
  problem_disabled_text:
    "{organisation} ne propose pas le portail des donateurs pour le moment. Veuillez contacter l'organisation directement.",
  problem_csrf_title: 'Veuillez réessayer',
  problem_csrf_text:
    'La page est restée ouverte trop longtemps ou le formulaire a été envoyé deux fois. Veuillez recharger la page et réessayer.',
  problem_session_title: 'Votre session a pris fin',
  problem_session_text:
    "Pour votre sécurité, vous êtes déconnecté·e après 30 minutes d'inactivité et au plus tard après 2 heures. Demandez un nouveau lien pour continuer.",
  problem_too_many_title: 'Trop de demandes',
  problem_too_many_text: 'Veuillez attendre {minutes} minutes avant de demander un autre lien.',
  problem_failed_title: "Une erreur s'est produite",
  problem_failed_text: "Votre demande n'a pas pu aboutir. Veuillez réessayer plus tard.",
  problem_no_organisation:
    "Pour recevoir un nouveau lien, utilisez le lien vers le portail des donateurs sur le site de l'organisation que vous soutenez.",
  reload: 'Recharger la page',
};
