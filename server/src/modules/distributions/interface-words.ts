/**
 * The service's own words on the respondent's side (the answer page, its other pages, the e-mails), in the
 * language the respondent reads the survey in. Authors' strings (titles, questions, labels, the e-mail's subject
 * and message) come from the survey and its translations; these are the words around them.
 *
 * One plain object per language. `en` defines the keys; every other full catalogue is typed `Catalogue`, so a
 * missing (or unknown) key is a compile error. A regional catalogue (`de-CH`) is `Partial<Catalogue>` and holds
 * only what differs. Lookup is per string: `de-AT` → `de` → `en`. A message that depends on a number is a set of
 * plural forms chosen with `Intl.PluralRules` (ordinal for `place`); a form a language lacks falls back to `other`.
 * Placeholders are `{name}`; a number fills in formatted for the language.
 */

type PluralForm = 'zero' | 'one' | 'two' | 'few' | 'many';
/** Plural forms of one message; `other` always, the rest as the language's rules need them. */
export type Plural = { readonly other: string } & { readonly [F in PluralForm]?: string };

const en = {
  // The answer page.
  submit: 'Submit my answers',
  required: '(required)',
  optional: '(optional)',
  problems: {
    one: 'There is 1 problem with your answers',
    other: 'There are {count} problems with your answers',
  } as Plural,
  checkTitle: 'Check your answers – {title}',
  // A link of the error summary: it is read out of context, so it names its question.
  errorLink: '{question}: {message}',
  languages: 'Language',
  npsLow: 'Not at all likely',
  npsHigh: 'Extremely likely',
  other: 'Other',
  otherText: 'Other, please say',
  notApplicable: 'Not applicable',
  notApplicableShort: 'N/A',
  rankingHint: 'Put the {count} items in order: choose an item for each place, the most important first.',
  place: { one: '{count}st place', two: '{count}nd place', few: '{count}rd place', other: '{count}th place' } as Plural,
  chooseItem: 'Choose…',
  chooseBetween: 'Choose {min} to {max}.',
  chooseAtLeast: 'Choose at least {min}.',
  chooseAtMost: 'Choose at most {max}.',
  logicChanged: 'Your answers changed which questions apply to you. Please check them, then submit.',
  // What a respondent reads next to a question the answers got wrong.
  answerRequired: 'Please answer this question.',
  answerSomething: 'Please answer at least one question.',
  otherMissing: 'Say what "Other" is, or untick it.',
  chooseNumber: 'Choose a number from {min} to {max}.',
  chooseOption: 'Choose one of the options.',
  chooseFromOptions: 'Choose from the options shown.',
  tooLong: 'Use at most {max} characters.',
  matrixRows: 'Choose one answer in each row.',
  rankingPlaces: 'Give each place a different item, so that every item has a place.',
  enterNumber: 'Enter a number.',
  enterWholeNumber: 'Enter a whole number.',
  numberBetween: 'It must be from {min} to {max}.',
  numberAtLeast: 'It must be at least {min}.',
  numberAtMost: 'It must be at most {max}.',
  enterDate: 'Enter a date.',
  dateBetween: 'Choose a date from {min} to {max}.',
  dateFrom: 'Choose a date on or after {min}.',
  dateUntil: 'Choose a date on or before {max}.',
  // The other pages.
  thanks: 'Thank you!',
  usedText: 'Your answer has been recorded. This personal link accepts one answer, so there is nothing more to do.',
  embedDoneText: 'Your answer from this browser has been recorded.',
  unknownTitle: 'This link is not valid',
  unknownText:
    'Check that you opened the whole link from your invitation. If it still does not work, ask the person who sent it for a new one.',
  expiredTitle: 'This link has expired',
  expiredText:
    'The survey can no longer be answered through this link. Ask the person who sent it if you would still like to take part.',
  unsubscribedTitle: 'You have unsubscribed',
  unsubscribedText: 'You asked not to receive these survey e-mails, so this link no longer works.',
  closedTitle: 'This survey is not open',
  closedText: 'The survey is not accepting answers right now. Please try again later.',
  tooLargeTitle: 'Your answer is too long',
  tooLargeText: 'Please shorten your answers and send them again.',
  unsupportedTitle: 'This answer could not be read',
  unsupportedText: 'Please send the form from the survey page.',
  busyTitle: 'Too many answers',
  busyText: 'This survey has received many answers from your network just now. Please try again later.',
  unavailableTitle: 'Back in a moment',
  unavailableText:
    'The survey is briefly unavailable. Your answers have not been sent: please try again in a few seconds.',
  errorTitle: 'Something went wrong',
  errorText: 'Your answer could not be handled right now. Please try again in a moment. (Reference {reference})',
  unsubscribeTitle: 'Unsubscribe',
  unsubscribeQuestion: 'Stop survey e-mails from this organization to {email}?',
  unsubscribeButton: 'Unsubscribe',
  // The e-mails.
  greeting: 'Hello,',
  greetingName: 'Hello {name},',
  invitation: 'You are invited to answer "{title}".',
  reminderLead: 'A reminder: we would still love to hear from you in "{title}".',
  reminderSubject: 'Reminder: {subject}',
  answerHere: 'Answer here: {url}',
  answerButton: 'Answer the survey',
  personalLink: 'This link is personal: please do not forward it. It works until {date} and accepts one answer.',
  unsubscribeLine: 'Stop receiving these e-mails: {url}',
  unsubscribeLink: 'Stop receiving these e-mails',
};

type English = typeof en;
/** A full catalogue: every key of `en`, each a string or plural forms as in `en`. */
export type Catalogue = { readonly [K in keyof English]: English[K] extends Plural ? Plural : string };
export type TextKey = { [K in keyof English]: English[K] extends Plural ? never : K }[keyof English];
export type PluralKey = Exclude<keyof English, TextKey>;

const de: Catalogue = {
  submit: 'Antworten absenden',
  required: '(Pflichtfrage)',
  optional: '(optional)',
  problems: {
    one: 'Bei Ihren Antworten gibt es 1 Problem',
    other: 'Bei Ihren Antworten gibt es {count} Probleme',
  },
  checkTitle: 'Bitte prüfen Sie Ihre Antworten – {title}',
  errorLink: '{question}: {message}',
  languages: 'Sprache',
  npsLow: 'Überhaupt nicht wahrscheinlich',
  npsHigh: 'Äußerst wahrscheinlich',
  other: 'Sonstiges',
  otherText: 'Sonstiges, bitte angeben',
  notApplicable: 'Trifft nicht zu',
  notApplicableShort: 'entfällt',
  rankingHint:
    'Bringen Sie die {count} Einträge in eine Reihenfolge: Wählen Sie für jeden Platz einen Eintrag, den wichtigsten zuerst.',
  place: { other: '{count}. Platz' },
  chooseItem: 'Auswählen…',
  chooseBetween: 'Wählen Sie {min} bis {max} aus.',
  chooseAtLeast: 'Wählen Sie mindestens {min} aus.',
  chooseAtMost: 'Wählen Sie höchstens {max} aus.',
  logicChanged:
    'Ihre Antworten haben geändert, welche Fragen für Sie gelten. Bitte prüfen Sie sie und senden Sie sie dann ab.',
  answerRequired: 'Bitte beantworten Sie diese Frage.',
  answerSomething: 'Bitte beantworten Sie mindestens eine Frage.',
  otherMissing: 'Geben Sie an, was „Sonstiges“ ist, oder entfernen Sie das Häkchen.',
  chooseNumber: 'Wählen Sie eine Zahl von {min} bis {max}.',
  chooseOption: 'Wählen Sie eine der Optionen.',
  chooseFromOptions: 'Wählen Sie aus den angezeigten Optionen.',
  tooLong: 'Verwenden Sie höchstens {max} Zeichen.',
  matrixRows: 'Wählen Sie in jeder Zeile eine Antwort.',
  rankingPlaces: 'Geben Sie jedem Platz einen anderen Eintrag, sodass jeder Eintrag einen Platz hat.',
  enterNumber: 'Geben Sie eine Zahl ein.',
  enterWholeNumber: 'Geben Sie eine ganze Zahl ein.',
  numberBetween: 'Sie muss zwischen {min} und {max} liegen.',
  numberAtLeast: 'Sie muss mindestens {min} sein.',
  numberAtMost: 'Sie darf höchstens {max} sein.',
  enterDate: 'Geben Sie ein Datum ein.',
  dateBetween: 'Wählen Sie ein Datum vom {min} bis zum {max}.',
  dateFrom: 'Wählen Sie ein Datum ab dem {min}.',
  dateUntil: 'Wählen Sie ein Datum bis zum {max}.',
  thanks: 'Vielen Dank!',
  usedText:
    'Ihre Antwort wurde gespeichert. Dieser persönliche Link nimmt nur eine Antwort an, Sie müssen also nichts weiter tun.',
  embedDoneText: 'Ihre Antwort aus diesem Browser wurde gespeichert.',
  unknownTitle: 'Dieser Link ist ungültig',
  unknownText:
    'Prüfen Sie, ob Sie den vollständigen Link aus Ihrer Einladung geöffnet haben. Funktioniert er weiterhin nicht, bitten Sie die Person, die ihn gesendet hat, um einen neuen.',
  expiredTitle: 'Dieser Link ist abgelaufen',
  expiredText:
    'Über diesen Link kann die Umfrage nicht mehr beantwortet werden. Wenden Sie sich an die Person, die ihn gesendet hat, wenn Sie noch teilnehmen möchten.',
  unsubscribedTitle: 'Sie haben sich abgemeldet',
  unsubscribedText:
    'Sie haben darum gebeten, diese Umfrage-E-Mails nicht mehr zu erhalten, daher funktioniert dieser Link nicht mehr.',
  closedTitle: 'Diese Umfrage ist nicht geöffnet',
  closedText: 'Die Umfrage nimmt derzeit keine Antworten an. Bitte versuchen Sie es später erneut.',
  tooLargeTitle: 'Ihre Antwort ist zu lang',
  tooLargeText: 'Bitte kürzen Sie Ihre Antworten und senden Sie sie erneut.',
  unsupportedTitle: 'Diese Antwort konnte nicht gelesen werden',
  unsupportedText: 'Bitte senden Sie das Formular von der Umfrageseite aus.',
  busyTitle: 'Zu viele Antworten',
  busyText:
    'Diese Umfrage hat gerade viele Antworten aus Ihrem Netzwerk erhalten. Bitte versuchen Sie es später erneut.',
  unavailableTitle: 'Gleich wieder da',
  unavailableText:
    'Die Umfrage ist kurz nicht erreichbar. Ihre Antworten wurden nicht gesendet: Bitte versuchen Sie es in ein paar Sekunden erneut.',
  errorTitle: 'Etwas ist schiefgelaufen',
  errorText:
    'Ihre Antwort konnte gerade nicht verarbeitet werden. Bitte versuchen Sie es gleich noch einmal. (Referenz {reference})',
  unsubscribeTitle: 'Abmelden',
  unsubscribeQuestion: 'Keine Umfrage-E-Mails dieser Organisation mehr an {email} senden?',
  unsubscribeButton: 'Abmelden',
  greeting: 'Hallo,',
  greetingName: 'Hallo {name},',
  invitation: 'Sie sind eingeladen, an „{title}“ teilzunehmen.',
  reminderLead: 'Eine Erinnerung: Wir würden uns weiterhin über Ihre Teilnahme an „{title}“ freuen.',
  reminderSubject: 'Erinnerung: {subject}',
  answerHere: 'Hier antworten: {url}',
  answerButton: 'An der Umfrage teilnehmen',
  personalLink:
    'Dieser Link ist persönlich: Bitte leiten Sie ihn nicht weiter. Er gilt bis zum {date} und nimmt eine Antwort an.',
  unsubscribeLine: 'Diese E-Mails nicht mehr erhalten: {url}',
  unsubscribeLink: 'Diese E-Mails nicht mehr erhalten',
};

/** Swiss German writes "ss" for "ß"; everything else is German's. */
const deCH: Partial<Catalogue> = {
  npsHigh: 'Äusserst wahrscheinlich',
};

// French typography: a no-break space before ":", "?", "!" and inside « ».
const fr: Catalogue = {
  submit: 'Envoyer mes réponses',
  required: '(obligatoire)',
  optional: '(facultatif)',
  problems: {
    one: 'Il y a 1 problème dans vos réponses',
    other: 'Il y a {count} problèmes dans vos réponses',
  },
  checkTitle: 'Vérifiez vos réponses – {title}',
  errorLink: '{question}\u00a0: {message}',
  languages: 'Langue',
  npsLow: 'Pas du tout probable',
  npsHigh: 'Extrêmement probable',
  other: 'Autre',
  otherText: 'Autre, veuillez préciser',
  notApplicable: 'Non applicable',
  notApplicableShort: 'N/A',
  rankingHint:
    'Classez les {count} éléments\u00a0: choisissez un élément pour chaque place, le plus important en premier.',
  place: { one: '{count}re place', other: '{count}e place' },
  chooseItem: 'Choisir…',
  chooseBetween: 'Choisissez-en de {min} à {max}.',
  chooseAtLeast: 'Choisissez-en au moins {min}.',
  chooseAtMost: 'Choisissez-en au plus {max}.',
  logicChanged: 'Vos réponses ont changé les questions qui vous concernent. Vérifiez-les, puis envoyez.',
  answerRequired: 'Veuillez répondre à cette question.',
  answerSomething: 'Veuillez répondre à au moins une question.',
  otherMissing: 'Précisez ce que recouvre «\u00a0Autre\u00a0», ou décochez-le.',
  chooseNumber: 'Choisissez un nombre de {min} à {max}.',
  chooseOption: 'Choisissez l’une des options.',
  chooseFromOptions: 'Choisissez parmi les options proposées.',
  tooLong: 'Utilisez au plus {max} caractères.',
  matrixRows: 'Choisissez une réponse par ligne.',
  rankingPlaces: 'Attribuez un élément différent à chaque place, afin que chaque élément ait une place.',
  enterNumber: 'Saisissez un nombre.',
  enterWholeNumber: 'Saisissez un nombre entier.',
  numberBetween: 'Il doit être compris entre {min} et {max}.',
  numberAtLeast: 'Il doit être d’au moins {min}.',
  numberAtMost: 'Il doit être d’au plus {max}.',
  enterDate: 'Saisissez une date.',
  dateBetween: 'Choisissez une date du {min} au {max}.',
  dateFrom: 'Choisissez une date à partir du {min}.',
  dateUntil: 'Choisissez une date jusqu’au {max}.',
  thanks: 'Merci\u00a0!',
  usedText:
    'Votre réponse a été enregistrée. Ce lien personnel n’accepte qu’une réponse\u00a0: vous n’avez plus rien à faire.',
  embedDoneText: 'Votre réponse depuis ce navigateur a été enregistrée.',
  unknownTitle: 'Ce lien n’est pas valide',
  unknownText:
    'Vérifiez que vous avez ouvert le lien complet de votre invitation. S’il ne fonctionne toujours pas, demandez-en un nouveau à la personne qui vous l’a envoyé.',
  expiredTitle: 'Ce lien a expiré',
  expiredText:
    'Il n’est plus possible de répondre à l’enquête avec ce lien. Adressez-vous à la personne qui vous l’a envoyé si vous souhaitez toujours participer.',
  unsubscribedTitle: 'Votre désabonnement est enregistré',
  unsubscribedText:
    'Vous avez demandé à ne plus recevoir ces e-mails d’enquête\u00a0: ce lien ne fonctionne donc plus.',
  closedTitle: 'Cette enquête n’est pas ouverte',
  closedText: 'L’enquête n’accepte pas de réponses pour le moment. Veuillez réessayer plus tard.',
  tooLargeTitle: 'Votre réponse est trop longue',
  tooLargeText: 'Veuillez raccourcir vos réponses et les envoyer de nouveau.',
  unsupportedTitle: 'Cette réponse n’a pas pu être lue',
  unsupportedText: 'Veuillez envoyer le formulaire depuis la page de l’enquête.',
  busyTitle: 'Trop de réponses',
  busyText: 'Cette enquête vient de recevoir de nombreuses réponses depuis votre réseau. Veuillez réessayer plus tard.',
  unavailableTitle: 'De retour dans un instant',
  unavailableText:
    'L’enquête est brièvement indisponible. Vos réponses n’ont pas été envoyées : veuillez réessayer dans quelques secondes.',
  errorTitle: 'Une erreur s’est produite',
  errorText:
    'Votre réponse n’a pas pu être traitée pour le moment. Veuillez réessayer dans un instant. (Référence {reference})',
  unsubscribeTitle: 'Se désabonner',
  unsubscribeQuestion: 'Ne plus envoyer les e-mails d’enquête de cette organisation à {email}\u00a0?',
  unsubscribeButton: 'Se désabonner',
  greeting: 'Bonjour,',
  greetingName: 'Bonjour {name},',
  invitation: 'Nous vous invitons à répondre à «\u00a0{title}\u00a0».',
  reminderLead: 'Petit rappel\u00a0: nous aimerions toujours avoir votre avis dans «\u00a0{title}\u00a0».',
  reminderSubject: 'Rappel\u00a0: {subject}',
  answerHere: 'Répondre ici\u00a0: {url}',
  answerButton: 'Répondre à l’enquête',
  personalLink:
    'Ce lien est personnel\u00a0: merci de ne pas le transférer. Il est valable jusqu’au {date} et n’accepte qu’une réponse.',
  unsubscribeLine: 'Ne plus recevoir ces e-mails\u00a0: {url}',
  unsubscribeLink: 'Ne plus recevoir ces e-mails',
};

const es: Catalogue = {
  submit: 'Enviar mis respuestas',
  required: '(obligatoria)',
  optional: '(opcional)',
  problems: { one: 'Hay 1 problema en sus respuestas', other: 'Hay {count} problemas en sus respuestas' },
  checkTitle: 'Revise sus respuestas – {title}',
  errorLink: '{question}: {message}',
  languages: 'Idioma',
  npsLow: 'Nada probable',
  npsHigh: 'Extremadamente probable',
  other: 'Otro',
  otherText: 'Otro, especifique',
  notApplicable: 'No aplica',
  notApplicableShort: 'N/A',
  rankingHint: 'Ordene los {count} elementos: elija un elemento para cada puesto, empezando por el más importante.',
  place: { other: '{count}.º puesto' },
  chooseItem: 'Elegir…',
  chooseBetween: 'Elija entre {min} y {max}.',
  chooseAtLeast: 'Elija al menos {min}.',
  chooseAtMost: 'Elija como máximo {max}.',
  logicChanged: 'Sus respuestas han cambiado las preguntas que le corresponden. Revíselas y luego envíelas.',
  answerRequired: 'Responda a esta pregunta.',
  answerSomething: 'Responda al menos a una pregunta.',
  otherMissing: 'Indique qué es «Otro» o desmárquelo.',
  chooseNumber: 'Elija un número del {min} al {max}.',
  chooseOption: 'Elija una de las opciones.',
  chooseFromOptions: 'Elija entre las opciones mostradas.',
  tooLong: 'Use como máximo {max} caracteres.',
  matrixRows: 'Elija una respuesta en cada fila.',
  rankingPlaces: 'Asigne un elemento distinto a cada puesto, de modo que cada elemento tenga un puesto.',
  enterNumber: 'Introduzca un número.',
  enterWholeNumber: 'Introduzca un número entero.',
  numberBetween: 'Debe estar entre {min} y {max}.',
  numberAtLeast: 'Debe ser como mínimo {min}.',
  numberAtMost: 'Debe ser como máximo {max}.',
  enterDate: 'Introduzca una fecha.',
  dateBetween: 'Elija una fecha entre el {min} y el {max}.',
  dateFrom: 'Elija una fecha a partir del {min}.',
  dateUntil: 'Elija una fecha hasta el {max}.',
  thanks: '¡Gracias!',
  usedText:
    'Su respuesta se ha registrado. Este enlace personal admite una sola respuesta, así que no tiene que hacer nada más.',
  embedDoneText: 'Se ha registrado su respuesta desde este navegador.',
  unknownTitle: 'Este enlace no es válido',
  unknownText:
    'Compruebe que ha abierto el enlace completo de su invitación. Si sigue sin funcionar, pida uno nuevo a la persona que se lo envió.',
  expiredTitle: 'Este enlace ha caducado',
  expiredText:
    'Ya no se puede responder a la encuesta con este enlace. Consulte a la persona que se lo envió si todavía desea participar.',
  unsubscribedTitle: 'Se ha dado de baja',
  unsubscribedText: 'Ha pedido no recibir estos correos de encuestas, por lo que este enlace ya no funciona.',
  closedTitle: 'Esta encuesta no está abierta',
  closedText: 'La encuesta no acepta respuestas en este momento. Inténtelo de nuevo más tarde.',
  tooLargeTitle: 'Su respuesta es demasiado larga',
  tooLargeText: 'Acorte sus respuestas y vuelva a enviarlas.',
  unsupportedTitle: 'No se ha podido leer esta respuesta',
  unsupportedText: 'Envíe el formulario desde la página de la encuesta.',
  busyTitle: 'Demasiadas respuestas',
  busyText: 'Esta encuesta acaba de recibir muchas respuestas desde su red. Inténtelo de nuevo más tarde.',
  unavailableTitle: 'Volvemos enseguida',
  unavailableText:
    'La encuesta no está disponible por un momento. Sus respuestas no se han enviado: inténtelo de nuevo en unos segundos.',
  errorTitle: 'Algo ha fallado',
  errorText:
    'No se ha podido procesar su respuesta en este momento. Inténtelo de nuevo en unos instantes. (Referencia {reference})',
  unsubscribeTitle: 'Darse de baja',
  unsubscribeQuestion: '¿Dejar de enviar a {email} los correos de encuestas de esta organización?',
  unsubscribeButton: 'Darse de baja',
  greeting: 'Hola:',
  greetingName: 'Hola, {name}:',
  invitation: 'Le invitamos a responder a «{title}».',
  reminderLead: 'Un recordatorio: nos encantaría conocer su opinión en «{title}».',
  reminderSubject: 'Recordatorio: {subject}',
  answerHere: 'Responda aquí: {url}',
  answerButton: 'Responder a la encuesta',
  personalLink: 'Este enlace es personal: no lo reenvíe. Es válido hasta el {date} y admite una sola respuesta.',
  unsubscribeLine: 'Dejar de recibir estos correos: {url}',
  unsubscribeLink: 'Dejar de recibir estos correos',
};

// Wording that reads right in Portugal and in Brazil where the two differ.
const pt: Catalogue = {
  submit: 'Enviar respostas',
  required: '(obrigatória)',
  optional: '(opcional)',
  problems: { one: 'Há 1 problema nas suas respostas', other: 'Há {count} problemas nas suas respostas' },
  checkTitle: 'Verifique as suas respostas – {title}',
  errorLink: '{question}: {message}',
  languages: 'Idioma',
  npsLow: 'Nada provável',
  npsHigh: 'Extremamente provável',
  other: 'Outro',
  otherText: 'Outro, especifique',
  notApplicable: 'Não se aplica',
  notApplicableShort: 'N/A',
  rankingHint: 'Ordene os {count} itens: escolha um item para cada posição, começando pelo mais importante.',
  place: { other: '{count}.º lugar' },
  chooseItem: 'Escolher…',
  chooseBetween: 'Escolha entre {min} e {max}.',
  chooseAtLeast: 'Escolha pelo menos {min}.',
  chooseAtMost: 'Escolha no máximo {max}.',
  logicChanged: 'As suas respostas mudaram as perguntas que se aplicam. Verifique-as e depois envie.',
  answerRequired: 'Responda a esta pergunta.',
  answerSomething: 'Responda a pelo menos uma pergunta.',
  otherMissing: 'Indique o que é «Outro» ou desmarque a opção.',
  chooseNumber: 'Escolha um número de {min} a {max}.',
  chooseOption: 'Escolha uma das opções.',
  chooseFromOptions: 'Escolha entre as opções apresentadas.',
  tooLong: 'Use no máximo {max} caracteres.',
  matrixRows: 'Escolha uma resposta em cada linha.',
  rankingPlaces: 'Atribua um item diferente a cada posição, para que todos os itens tenham uma posição.',
  enterNumber: 'Indique um número.',
  enterWholeNumber: 'Indique um número inteiro.',
  numberBetween: 'Deve estar entre {min} e {max}.',
  numberAtLeast: 'Deve ser no mínimo {min}.',
  numberAtMost: 'Deve ser no máximo {max}.',
  enterDate: 'Indique uma data.',
  dateBetween: 'Escolha uma data entre {min} e {max}.',
  dateFrom: 'Escolha uma data a partir de {min}.',
  dateUntil: 'Escolha uma data até {max}.',
  thanks: 'Obrigado!',
  usedText:
    'A sua resposta foi recebida. Este link pessoal aceita uma única resposta, por isso não há mais nada a fazer.',
  embedDoneText: 'A resposta enviada a partir deste navegador foi recebida.',
  unknownTitle: 'Este link não é válido',
  unknownText:
    'Verifique se abriu o link completo do convite. Se continuar sem funcionar, peça um novo à pessoa que o enviou.',
  expiredTitle: 'Este link expirou',
  expiredText:
    'Já não é possível responder ao questionário através deste link. Fale com a pessoa que o enviou se ainda quiser participar.',
  unsubscribedTitle: 'Deixará de receber estes e-mails',
  unsubscribedText: 'Pediu para não receber estes e-mails de questionários, por isso este link já não funciona.',
  closedTitle: 'Este questionário não está aberto',
  closedText: 'O questionário não aceita respostas neste momento. Tente novamente mais tarde.',
  tooLargeTitle: 'A resposta é demasiado longa',
  tooLargeText: 'Encurte as respostas e envie-as novamente.',
  unsupportedTitle: 'Não foi possível ler esta resposta',
  unsupportedText: 'Envie o formulário a partir da página do questionário.',
  busyTitle: 'Demasiadas respostas',
  busyText: 'Este questionário acabou de receber muitas respostas da sua rede. Tente novamente mais tarde.',
  unavailableTitle: 'Voltamos já',
  unavailableText:
    'O questionário está brevemente indisponível. As suas respostas não foram enviadas: tente novamente dentro de alguns segundos.',
  errorTitle: 'Algo correu mal',
  errorText:
    'Não foi possível processar a resposta neste momento. Tente novamente daqui a pouco. (Referência {reference})',
  unsubscribeTitle: 'Deixar de receber e-mails',
  unsubscribeQuestion: 'Deixar de enviar para {email} os e-mails de questionários desta organização?',
  unsubscribeButton: 'Deixar de receber',
  greeting: 'Olá,',
  greetingName: 'Olá {name},',
  invitation: 'Gostaríamos de saber a sua opinião em «{title}».',
  reminderLead: 'Um lembrete: continuamos a querer saber a sua opinião em «{title}».',
  reminderSubject: 'Lembrete: {subject}',
  answerHere: 'Responda aqui: {url}',
  answerButton: 'Responder ao questionário',
  personalLink: 'Este link é pessoal: não o envie a outras pessoas. É válido até {date} e aceita uma única resposta.',
  unsubscribeLine: 'Deixar de receber estes e-mails: {url}',
  unsubscribeLink: 'Deixar de receber estes e-mails',
};

const nl: Catalogue = {
  submit: 'Mijn antwoorden versturen',
  required: '(verplicht)',
  optional: '(optioneel)',
  problems: { one: 'Er is 1 probleem met uw antwoorden', other: 'Er zijn {count} problemen met uw antwoorden' },
  checkTitle: 'Controleer uw antwoorden – {title}',
  errorLink: '{question}: {message}',
  languages: 'Taal',
  npsLow: 'Helemaal niet waarschijnlijk',
  npsHigh: 'Zeer waarschijnlijk',
  other: 'Anders',
  otherText: 'Anders, namelijk',
  notApplicable: 'Niet van toepassing',
  notApplicableShort: 'n.v.t.',
  rankingHint: 'Zet de {count} items in volgorde: kies voor elke plaats een item, het belangrijkste eerst.',
  place: { other: '{count}e plaats' },
  chooseItem: 'Kies…',
  chooseBetween: 'Kies er {min} tot {max}.',
  chooseAtLeast: 'Kies er minstens {min}.',
  chooseAtMost: 'Kies er hoogstens {max}.',
  logicChanged: 'Uw antwoorden hebben veranderd welke vragen voor u gelden. Controleer ze en verstuur ze daarna.',
  answerRequired: 'Beantwoord deze vraag.',
  answerSomething: 'Beantwoord ten minste één vraag.',
  otherMissing: 'Geef aan wat ‘Anders’ is, of vink het uit.',
  chooseNumber: 'Kies een getal van {min} tot en met {max}.',
  chooseOption: 'Kies een van de opties.',
  chooseFromOptions: 'Kies uit de getoonde opties.',
  tooLong: 'Gebruik hoogstens {max} tekens.',
  matrixRows: 'Kies in elke rij één antwoord.',
  rankingPlaces: 'Geef elke plaats een ander item, zodat elk item een plaats heeft.',
  enterNumber: 'Vul een getal in.',
  enterWholeNumber: 'Vul een geheel getal in.',
  numberBetween: 'Het moet tussen {min} en {max} liggen.',
  numberAtLeast: 'Het moet minstens {min} zijn.',
  numberAtMost: 'Het mag hoogstens {max} zijn.',
  enterDate: 'Vul een datum in.',
  dateBetween: 'Kies een datum van {min} tot en met {max}.',
  dateFrom: 'Kies een datum vanaf {min}.',
  dateUntil: 'Kies een datum tot en met {max}.',
  thanks: 'Bedankt!',
  usedText:
    'Uw antwoord is opgeslagen. Deze persoonlijke link accepteert één antwoord, dus u hoeft niets meer te doen.',
  embedDoneText: 'Uw antwoord vanuit deze browser is opgeslagen.',
  unknownTitle: 'Deze link is ongeldig',
  unknownText:
    'Controleer of u de volledige link uit uw uitnodiging hebt geopend. Werkt hij nog steeds niet, vraag dan degene die hem stuurde om een nieuwe.',
  expiredTitle: 'Deze link is verlopen',
  expiredText:
    'De enquête kan niet meer via deze link worden ingevuld. Vraag het degene die hem stuurde als u toch nog wilt meedoen.',
  unsubscribedTitle: 'U bent afgemeld',
  unsubscribedText: 'U hebt gevraagd deze enquête-e-mails niet meer te ontvangen, dus deze link werkt niet meer.',
  closedTitle: 'Deze enquête is niet open',
  closedText: 'De enquête neemt op dit moment geen antwoorden aan. Probeer het later opnieuw.',
  tooLargeTitle: 'Uw antwoord is te lang',
  tooLargeText: 'Maak uw antwoorden korter en verstuur ze opnieuw.',
  unsupportedTitle: 'Dit antwoord kon niet worden gelezen',
  unsupportedText: 'Verstuur het formulier vanaf de enquêtepagina.',
  busyTitle: 'Te veel antwoorden',
  busyText: 'Deze enquête heeft zojuist veel antwoorden uit uw netwerk ontvangen. Probeer het later opnieuw.',
  unavailableTitle: 'Zo weer terug',
  unavailableText:
    'De enquête is even niet bereikbaar. Uw antwoorden zijn niet verzonden: probeer het over een paar seconden opnieuw.',
  errorTitle: 'Er is iets misgegaan',
  errorText: 'Uw antwoord kon nu niet worden verwerkt. Probeer het zo opnieuw. (Referentie {reference})',
  unsubscribeTitle: 'Afmelden',
  unsubscribeQuestion: 'Geen enquête-e-mails van deze organisatie meer naar {email} sturen?',
  unsubscribeButton: 'Afmelden',
  greeting: 'Hallo,',
  greetingName: 'Hallo {name},',
  invitation: 'U bent uitgenodigd om ‘{title}’ in te vullen.',
  reminderLead: 'Een herinnering: we horen nog steeds graag uw mening in ‘{title}’.',
  reminderSubject: 'Herinnering: {subject}',
  answerHere: 'Hier invullen: {url}',
  answerButton: 'Vul de enquête in',
  personalLink: 'Deze link is persoonlijk: stuur hem niet door. Hij werkt tot {date} en accepteert één antwoord.',
  unsubscribeLine: 'Deze e-mails niet meer ontvangen: {url}',
  unsubscribeLink: 'Deze e-mails niet meer ontvangen',
};

const it: Catalogue = {
  submit: 'Invia le mie risposte',
  required: '(obbligatoria)',
  optional: '(facoltativa)',
  problems: { one: 'C’è 1 problema nelle Sue risposte', other: 'Ci sono {count} problemi nelle Sue risposte' },
  checkTitle: 'Controlli le Sue risposte – {title}',
  errorLink: '{question}: {message}',
  languages: 'Lingua',
  npsLow: 'Per niente probabile',
  npsHigh: 'Estremamente probabile',
  other: 'Altro',
  otherText: 'Altro, specificare',
  notApplicable: 'Non applicabile',
  notApplicableShort: 'N/A',
  rankingHint:
    'Metta in ordine i {count} elementi: scelga un elemento per ogni posizione, partendo dal più importante.',
  place: { other: '{count}º posto' },
  chooseItem: 'Scegliere…',
  chooseBetween: 'Ne scelga da {min} a {max}.',
  chooseAtLeast: 'Ne scelga almeno {min}.',
  chooseAtMost: 'Ne scelga al massimo {max}.',
  logicChanged: 'Le Sue risposte hanno cambiato le domande che La riguardano. Le controlli, poi invii.',
  answerRequired: 'Risponda a questa domanda.',
  answerSomething: 'Risponda ad almeno una domanda.',
  otherMissing: 'Specifichi cosa intende con «Altro», oppure tolga la spunta.',
  chooseNumber: 'Scelga un numero da {min} a {max}.',
  chooseOption: 'Scelga una delle opzioni.',
  chooseFromOptions: 'Scelga tra le opzioni proposte.',
  tooLong: 'Usi al massimo {max} caratteri.',
  matrixRows: 'Scelga una risposta per ogni riga.',
  rankingPlaces: 'Assegni un elemento diverso a ogni posizione, in modo che ogni elemento abbia una posizione.',
  enterNumber: 'Inserisca un numero.',
  enterWholeNumber: 'Inserisca un numero intero.',
  numberBetween: 'Deve essere compreso tra {min} e {max}.',
  numberAtLeast: 'Deve essere almeno {min}.',
  numberAtMost: 'Deve essere al massimo {max}.',
  enterDate: 'Inserisca una data.',
  dateBetween: 'Scelga una data dal {min} al {max}.',
  dateFrom: 'Scelga una data a partire dal {min}.',
  dateUntil: 'Scelga una data entro il {max}.',
  thanks: 'Grazie!',
  usedText:
    'La Sua risposta è stata registrata. Questo link personale accetta una sola risposta, quindi non c’è altro da fare.',
  embedDoneText: 'La risposta inviata da questo browser è stata registrata.',
  unknownTitle: 'Questo link non è valido',
  unknownText:
    'Verifichi di aver aperto il link completo dell’invito. Se continua a non funzionare, ne chieda uno nuovo a chi Gliel’ha inviato.',
  expiredTitle: 'Questo link è scaduto',
  expiredText:
    'Non è più possibile rispondere al sondaggio tramite questo link. Si rivolga a chi Gliel’ha inviato se desidera ancora partecipare.',
  unsubscribedTitle: 'Iscrizione annullata',
  unsubscribedText: 'Ha chiesto di non ricevere più queste e-mail dei sondaggi, quindi questo link non funziona più.',
  closedTitle: 'Questo sondaggio non è aperto',
  closedText: 'Al momento il sondaggio non accetta risposte. Riprovi più tardi.',
  tooLargeTitle: 'La risposta è troppo lunga',
  tooLargeText: 'Accorci le risposte e le invii di nuovo.',
  unsupportedTitle: 'Impossibile leggere questa risposta',
  unsupportedText: 'Invii il modulo dalla pagina del sondaggio.',
  busyTitle: 'Troppe risposte',
  busyText: 'Questo sondaggio ha appena ricevuto molte risposte dalla Sua rete. Riprovi più tardi.',
  unavailableTitle: 'Torniamo subito',
  unavailableText:
    'Il sondaggio è momentaneamente non disponibile. Le Sue risposte non sono state inviate: riprovi tra qualche secondo.',
  errorTitle: 'Si è verificato un errore',
  errorText: 'Al momento non è stato possibile elaborare la Sua risposta. Riprovi tra poco. (Riferimento {reference})',
  unsubscribeTitle: 'Annulla iscrizione',
  unsubscribeQuestion: 'Non inviare più le e-mail dei sondaggi di questa organizzazione a {email}?',
  unsubscribeButton: 'Annulla iscrizione',
  greeting: 'Buongiorno,',
  greetingName: 'Gentile {name},',
  invitation: 'La invitiamo a rispondere a «{title}».',
  reminderLead: 'Un promemoria: ci farebbe ancora piacere conoscere la Sua opinione in «{title}».',
  reminderSubject: 'Promemoria: {subject}',
  answerHere: 'Risponda qui: {url}',
  answerButton: 'Rispondi al sondaggio',
  personalLink:
    'Questo link è personale: La preghiamo di non inoltrarlo. È valido fino al {date} e accetta una sola risposta.',
  unsubscribeLine: 'Non ricevere più queste e-mail: {url}',
  unsubscribeLink: 'Non ricevere più queste e-mail',
};

/** Every catalogue by lower-case tag: full ones by primary language, partial ones by their region. */
export const catalogues: Readonly<Record<string, Partial<Catalogue>>> = {
  en,
  de,
  'de-ch': deCH,
  fr,
  es,
  pt,
  nl,
  it,
};
/** The languages with a full catalogue. */
export const interfaceLanguages = ['en', 'de', 'fr', 'es', 'pt', 'nl', 'it'] as const;

/** The catalogues to read, most specific first: `de-Latn-AT` → `de-Latn` → `de`, then `en`. */
function chainOf(tag: string): Partial<Catalogue>[] {
  const chain: Partial<Catalogue>[] = [];
  const parts = tag.toLowerCase().split('-');
  for (let n = parts.length; n > 0; n--) {
    const catalogue = catalogues[parts.slice(0, n).join('-')];
    if (catalogue) chain.push(catalogue);
  }
  chain.push(en);
  return chain;
}

export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A value for a placeholder: text, a number (formatted for the language), or markup for `html` only. */
export type Param = string | number | { html: string };
export type Params = Readonly<Record<string, Param>>;

/** The placeholders of a message, e.g. `{title}`, in order of appearance. */
export const placeholdersOf = (template: string): string[] => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** Right to left for the scripts written that way (Arabic, Hebrew, Thaana, Syriac, N'Ko, Adlam). */
export function directionOf(tag: string): 'ltr' | 'rtl' {
  try {
    const script = new Intl.Locale(tag).maximize().script;
    return script && ['Arab', 'Hebr', 'Thaa', 'Syrc', 'Nkoo', 'Adlm', 'Rohg'].includes(script) ? 'rtl' : 'ltr';
  } catch {
    return 'ltr';
  }
}

/**
 * The words of one language. `language` is what the page or e-mail says it is in (the survey's language); numbers,
 * dates and plural rules follow it when it has a catalogue, and English (the fallback words' language) otherwise.
 */
export interface InterfaceWords {
  readonly language: string;
  readonly dir: 'ltr' | 'rtl';
  text(key: TextKey, params?: Params): string;
  /** The form of a plural message for `count` (ordinal for `place`), `{count}` filled in. */
  count(key: PluralKey, count: number, params?: Params): string;
  /** A message as HTML: the catalogue's text and string params escaped, `{ html }` params as they are. */
  html(key: TextKey, params?: Params): string;
  /** A calendar date (`YYYY-MM-DD` or a Date, read in UTC) written out in the language. */
  date(value: string | Date): string;
  number(value: number): string;
}

const ORDINAL: ReadonlySet<PluralKey> = new Set<PluralKey>(['place']);

function safeLocale(tag: string): string {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? 'en';
  } catch {
    return 'en';
  }
}

function build(tag: string): InterfaceWords {
  const chain = chainOf(tag);
  const locale = chain[0] === en && !tag.toLowerCase().startsWith('en') ? 'en' : safeLocale(tag);
  const numbers = new Intl.NumberFormat(locale, { maximumFractionDigits: 10 });
  const dates = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' });
  const rules = { cardinal: new Intl.PluralRules(locale), ordinal: new Intl.PluralRules(locale, { type: 'ordinal' }) };
  const lookup = <K extends keyof Catalogue>(key: K): Catalogue[K] =>
    chain.find((catalogue) => catalogue[key] !== undefined)![key] as Catalogue[K];
  // Each template split once into text and placeholder names (odd indexes): pages say dozens of these each.
  const parsed = new Map<string, string[]>();
  const partsOf = (template: string) => {
    let parts = parsed.get(template);
    if (!parts) parsed.set(template, (parts = template.split(/\{(\w+)\}/)));
    return parts;
  };
  // Small integers need no grouping and every catalogue language writes Latin digits.
  const formatNumber = (value: number) =>
    Number.isInteger(value) && Math.abs(value) < 1000 ? String(value) : numbers.format(value);
  const fill = (template: string, params: Params, literal: (s: string) => string, asHtml: boolean) => {
    const parts = partsOf(template);
    if (parts.length === 1) return literal(template);
    let out = '';
    for (let i = 0; i < parts.length; i++) {
      if (i % 2 === 0) {
        out += literal(parts[i]!);
        continue;
      }
      const value = params[parts[i]!];
      out +=
        value === undefined
          ? literal(`{${parts[i]}}`)
          : typeof value === 'number'
            ? literal(formatNumber(value))
            : typeof value === 'string'
              ? literal(value)
              : asHtml
                ? value.html
                : '';
    }
    return out;
  };
  const same = (s: string) => s;
  return {
    language: tag,
    dir: directionOf(tag),
    text: (key, params = {}) => fill(lookup(key), params, same, false),
    html: (key, params = {}) => fill(lookup(key), params, escapeHtml, true),
    count(key, count, params = {}) {
      const forms = lookup(key);
      const form = rules[ORDINAL.has(key) ? 'ordinal' : 'cardinal'].select(count) as PluralForm | 'other';
      return fill(forms[form] ?? forms.other, { ...params, count }, same, false);
    },
    number: formatNumber,
    date(value) {
      const at = typeof value === 'string' ? new Date(`${value}T00:00:00Z`) : value;
      return Number.isNaN(at.getTime()) ? String(value) : dates.format(at);
    },
  };
}

const built = new Map<string, InterfaceWords>();

/** The words for a BCP 47 tag (the survey language a page or e-mail is in); English for a language without any. */
export function wordsFor(tag: string | null | undefined): InterfaceWords {
  const key = tag && /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag) ? tag : 'en';
  let words = built.get(key);
  if (!words) {
    // Tags come from surveys and from the interface languages (never straight from a request): few, but bounded.
    if (built.size >= 256) built.clear();
    words = build(key);
    built.set(key, words);
  }
  return words;
}

/**
 * The interface language for a page that knows no survey yet (an unknown link, a refused form): the first of the
 * preferences (an `Accept-Language` list) with a catalogue, else English.
 */
export function interfaceLanguageOf(preferences: readonly string[]): string {
  for (const preference of preferences) {
    const primary = preference.toLowerCase().split('-')[0]!;
    const found = interfaceLanguages.find((language) => language === primary);
    if (found) return found;
  }
  return 'en';
}
