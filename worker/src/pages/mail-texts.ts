/**
 * Texts of the console's mail additions (docs/mail.md): the development outbox's status and link on
 * the notifications page, and "send a test mail" on the settings page (console/pages/mail-test.ts).
 */
import { addTexts } from './texts.js';

const en = {
  'notif.status.outbox': 'written to the outbox (no mail server)',
  'notif.openMail': 'Open the mail',
  'notif.downloadMail': 'Download (.eml)',
  'notif.mail.title': 'The mail',
  'notif.mail.from': 'From',
  'notif.mail.to': 'To',
  'notif.mail.subject': 'Subject',
  'notif.mail.date': 'Date',
  'notif.reason.noAddress': 'the account has no e-mail address',
  'mailTest.title': 'Send a test mail',
  'mailTest.hint':
    'One real attempt with the saved Mail settings, to the address below (empty: your own). The result names the ' +
    'step the server reached and its reply. Without a mail server, the mail goes to the development outbox.',
  'mailTest.to': 'Recipient',
  'mailTest.send': 'Send a test mail',
  'mailTest.sent': 'Sent: {server} accepted the mail to {to} (reply {reply}).',
  'mailTest.refused': '{server} refused the mail at the step "{stage}": reply {reply}.',
  'mailTest.failed': 'No answer from {server} at the step "{stage}": {reply}',
  'mailTest.outbox': 'No mail server is configured: the mail was written to the outbox, as this file:',
  'mailTest.notConfigured': 'Nothing was sent: mail is not configured.',
  'mailTest.stage.connect': 'connect',
  'mailTest.stage.tls': 'TLS',
  'mailTest.stage.auth': 'authentication',
  'mailTest.stage.mail_from': 'sender (MAIL FROM)',
  'mailTest.stage.rcpt': 'recipient (RCPT TO)',
  'mailTest.stage.data': 'message (DATA)',
};

const ru: Record<keyof typeof en, string> = {
  'notif.status.outbox': 'записано в папку писем (нет почтового сервера)',
  'notif.openMail': 'Открыть письмо',
  'notif.downloadMail': 'Скачать (.eml)',
  'notif.mail.title': 'Письмо',
  'notif.mail.from': 'От',
  'notif.mail.to': 'Кому',
  'notif.mail.subject': 'Тема',
  'notif.mail.date': 'Дата',
  'notif.reason.noAddress': 'у учётной записи нет адреса почты',
  'mailTest.title': 'Тестовое письмо',
  'mailTest.hint':
    'Одна настоящая попытка с сохранёнными настройками почты на адрес ниже (пусто — на ваш). В ответе — шаг, до ' +
    'которого дошёл сервер, и его ответ. Без почтового сервера письмо попадает в папку писем для разработки.',
  'mailTest.to': 'Получатель',
  'mailTest.send': 'Отправить тестовое письмо',
  'mailTest.sent': 'Отправлено: {server} принял письмо для {to} (ответ {reply}).',
  'mailTest.refused': '{server} отклонил письмо на шаге «{stage}»: ответ {reply}.',
  'mailTest.failed': 'Нет ответа от {server} на шаге «{stage}»: {reply}',
  'mailTest.outbox': 'Почтовый сервер не настроен: письмо записано в папку писем, в этот файл:',
  'mailTest.notConfigured': 'Ничего не отправлено: почта не настроена.',
  'mailTest.stage.connect': 'соединение',
  'mailTest.stage.tls': 'TLS',
  'mailTest.stage.auth': 'аутентификация',
  'mailTest.stage.mail_from': 'отправитель (MAIL FROM)',
  'mailTest.stage.rcpt': 'получатель (RCPT TO)',
  'mailTest.stage.data': 'письмо (DATA)',
};

addTexts({ en, ru });
