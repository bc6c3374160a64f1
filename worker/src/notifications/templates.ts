/**
 * The mails' texts: a subject, a plain-text and an HTML body per kind, in Russian and English
 * (AUTH_MAIL_LANGUAGE). Data (logins, names, dates, links) is escaped in the HTML body; subjects
 * hold no data at all, so nothing a user controls reaches a header.
 */
import { NOTIFICATION_KINDS } from '../../../schema/notifications.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

export type Language = 'ru' | 'en';

/** The kinds of notification (docs/mail.md): their one list is the table's (schema/notifications.ts). */
export { NOTIFICATION_KINDS };
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** What a template may show; every field is optional and plain data. */
export interface TemplateData {
  login?: string;
  displayName?: string;
  /** ISO times: when it happened, until when (a lock), when the password expires, when a link expires. */
  at?: string;
  until?: string;
  expiresAt?: string;
  days?: number;
  /** password_changed: self, admin (an administrator's reset), link (the reset link), operator. */
  by?: string;
  /** password_reset: link, external (LDAP, OIDC: use the directory or provider), blocked. */
  mode?: string;
  /** ldap or oidc, for the external mode. */
  source?: string;
  serviceName?: string;
  /** new_device: the client address, the browser and system in words, the User-Agent when neither was recognised. */
  address?: string;
  browser?: string;
  system?: string;
  userAgent?: string;
  /**
   * new_device: where to change the password and sign out everywhere; account_created with a password the
   * administrator gives: where to sign in (the mails' link base, mailLinkBase).
   */
  consoleUrl?: string;
  /** webhook_disabled: the subscription's URL, and why (gone: a 410; failing: failing for days). */
  url?: string;
  reason?: string;
  /** passkey_changed and second_factor_changed: added or removed; the passkey's name (token_expiring: the token's). */
  change?: string;
  name?: string;
  /** token_expiring: the token's first characters. */
  prefix?: string;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** A time as "2026-05-01 14:30 UTC": language-neutral and unambiguous. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A part of a body: text, or a link shown as itself. */
type Part = string | { link: string };
type Lines = Part[][];
type Texts = (d: TemplateData, link: string | null) => { subject: string; lines: Lines };

const who = (d: TemplateData) => d.login ?? '';

const RU: Record<NotificationKind, Texts> = {
  account_locked: (d) => ({
    subject: 'Учётная запись временно заблокирована',
    lines: [
      [
        `Вход в учётную запись ${who(d)} заблокирован после нескольких неудачных попыток входа ` +
          `до ${formatTime(d.until)}.`,
      ],
      ['Если это были не вы, сообщите администратору: кто-то подбирает ваш пароль.'],
    ],
  }),
  account_blocked_inactivity: (d) => ({
    subject: 'Учётная запись заблокирована из-за неактивности',
    lines: [
      [`Учётная запись ${who(d)} заблокирована: в неё не входили ${d.days ?? ''} дн.`],
      ['Чтобы снова пользоваться ею, обратитесь к администратору.'],
    ],
  }),
  token_expiring: (d) => ({
    subject: 'Срок действия API-токена скоро истекает',
    lines: [
      [
        `API-токен «${d.name ?? ''}» (${d.prefix ?? ''}…) учётной записи ${who(d)} истекает ` +
          `${formatTime(d.expiresAt)} (через ${d.days ?? ''} дн.).`,
      ],
      ['Если он ещё нужен, выпустите новый и замените его там, где он используется.'],
    ],
  }),
  password_expiring: (d) => ({
    subject: 'Срок действия пароля скоро истекает',
    lines: [
      [`Пароль учётной записи ${who(d)} истекает ${formatTime(d.expiresAt)} (через ${d.days ?? ''} дн.).`],
      ['Смените его заранее: после истечения срока войти можно будет только для смены пароля.'],
    ],
  }),
  password_changed: (d) => ({
    subject: 'Пароль изменён',
    lines: [
      [`Пароль учётной записи ${who(d)} изменён ${formatTime(d.at)}${byRu(d.by)}.`],
      ['Если это сделали не вы, немедленно сообщите администратору.'],
    ],
  }),
  account_created: (d, link) => ({
    subject: 'Для вас создана учётная запись',
    lines: [
      [`Для вас создана учётная запись ${who(d)}${d.serviceName ? ` в сервисе «${d.serviceName}»` : ''}.`],
      ...(link
        ? [
            ['Задайте свой пароль по ссылке (она действует до ', formatTime(d.expiresAt), ' и только один раз):'],
            [{ link }],
          ]
        : [
            ['Пароль вам сообщит администратор.'],
            ...(d.consoleUrl ? [['Входить сюда: ', { link: d.consoleUrl }]] : []),
          ]),
    ],
  }),
  password_reset: (d, link) => ({
    subject: 'Восстановление пароля',
    lines:
      d.mode === 'link' && link
        ? [
            [`Получен запрос на восстановление пароля учётной записи ${who(d)}.`],
            ['Задайте новый пароль по ссылке (она действует до ', formatTime(d.expiresAt), ' и только один раз):'],
            [{ link }],
            ['Если вы не запрашивали восстановление, просто проигнорируйте это письмо: пароль не изменится.'],
          ]
        : d.mode === 'external'
          ? [
              [`Получен запрос на восстановление пароля учётной записи ${who(d)}.`],
              [
                d.source === 'ldap'
                  ? 'Пароль этой учётной записи хранится в корпоративном каталоге (LDAP): ' +
                    'смените его там или обратитесь в службу поддержки.'
                  : 'Вход в эту учётную запись выполняется через внешний поставщик (OIDC): восстановите пароль у него.',
              ],
            ]
          : [
              [`Получен запрос на восстановление пароля учётной записи ${who(d)}.`],
              ['Учётная запись заблокирована, поэтому пароль не восстанавливается: обратитесь к администратору.'],
            ],
  }),
  new_device: (d) => ({
    subject: 'Вход в учётную запись с нового устройства',
    lines: [
      [`${formatTime(d.at)} в учётную запись ${who(d)} вошли с устройства или браузера, с которого раньше не входили.`],
      [`Адрес: ${d.address || 'неизвестен'}. Браузер и система: ${clientLine(d, 'не определены')}.`],
      ['Если это были вы, ничего делать не нужно.'],
      [
        'Если это были не вы, немедленно смените пароль и завершите все сеансы («Выйти везде»)',
        ...(d.consoleUrl ? [' в консоли: ', { link: d.consoleUrl }] : ['.']),
      ],
    ],
  }),
  passkey_changed: (d) => ({
    subject: d.change === 'removed' ? 'Ключ доступа удалён' : 'Добавлен ключ доступа',
    lines: [
      [
        d.change === 'removed'
          ? `${formatTime(d.at)} из учётной записи ${who(d)} удалён ключ доступа (passkey) «${d.name ?? ''}».`
          : `${formatTime(d.at)} к учётной записи ${who(d)} добавлен ключ доступа (passkey) «${d.name ?? ''}»: ` +
            'с ним можно входить без пароля.',
      ],
      ['Другие сеансы учётной записи завершены.'],
      ['Если это сделали не вы, немедленно сообщите администратору.'],
    ],
  }),
  second_factor_changed: (d) => ({
    subject: d.change === 'added' ? 'Добавлен второй фактор входа' : 'Удалён второй фактор входа',
    lines: [
      [
        `${d.change === 'added' ? 'К учётной записи' : 'У учётной записи'} ${who(d)} ${formatTime(d.at)} ` +
          `${d.change === 'added' ? 'добавлен' : 'удалён'} второй фактор входа${byRu(d.by)}; ` +
          'другие сеансы завершены.',
      ],
      ['Если это сделали не вы, немедленно сообщите администратору.'],
    ],
  }),
  webhook_disabled: (d) => ({
    subject: 'Подписка на вебхуки отключена',
    lines: [
      [
        `${formatTime(d.at)} сервис отключил подписку на вебхуки ${d.url ?? ''}: ` +
          (d.reason === 'gone' ? 'получатель ответил 410 Gone.' : 'доставка не удавалась 5 дней подряд.'),
      ],
      ['События ей больше не отправляются. Проверьте получателя и включите подписку снова в консоли.'],
    ],
  }),
};

/** new_device: the client, in words; the raw User-Agent only when nothing in it was recognised. */
function clientLine(d: TemplateData, unknown: string): string {
  const named = [d.browser, d.system].filter(Boolean).join(', ');
  return named || (d.userAgent ? `"${d.userAgent}"` : unknown);
}

function byRu(by: string | undefined): string {
  if (by === 'admin') return ' администратором';
  if (by === 'operator') return ' оператором сервиса';
  if (by === 'link') return ' по ссылке для восстановления пароля';
  return '';
}

const EN: Record<NotificationKind, Texts> = {
  account_locked: (d) => ({
    subject: 'Your account is temporarily locked',
    lines: [
      [`Logins to the account ${who(d)} are locked until ${formatTime(d.until)} after several failed attempts.`],
      ['If it was not you, tell your administrator: someone is guessing your password.'],
    ],
  }),
  account_blocked_inactivity: (d) => ({
    subject: 'Your account was blocked for inactivity',
    lines: [
      [`The account ${who(d)} was blocked: nobody logged in to it for ${d.days ?? ''} days.`],
      ['Ask your administrator to unblock it.'],
    ],
  }),
  token_expiring: (d) => ({
    subject: 'An API token expires soon',
    lines: [
      [
        `The API token "${d.name ?? ''}" (${d.prefix ?? ''}…) of the account ${who(d)} expires on ` +
          `${formatTime(d.expiresAt)} (in ${d.days ?? ''} days).`,
      ],
      ['If it is still needed, issue a new one and replace it where it is used.'],
    ],
  }),
  password_expiring: (d) => ({
    subject: 'Your password expires soon',
    lines: [
      [`The password of the account ${who(d)} expires on ${formatTime(d.expiresAt)} (in ${d.days ?? ''} days).`],
      ['Change it before then: once it has expired, a login only lets you change it.'],
    ],
  }),
  password_changed: (d) => ({
    subject: 'Your password was changed',
    lines: [
      [`The password of the account ${who(d)} was changed on ${formatTime(d.at)}${byEn(d.by)}.`],
      ['If it was not you, tell your administrator at once.'],
    ],
  }),
  account_created: (d, link) => ({
    subject: 'An account was created for you',
    lines: [
      [`An account ${who(d)} was created for you${d.serviceName ? ` in ${d.serviceName}` : ''}.`],
      ...(link
        ? [['Set your own password with this link (valid until ', formatTime(d.expiresAt), ', once):'], [{ link }]]
        : [
            ['Your administrator will tell you its password.'],
            ...(d.consoleUrl ? [['Sign in here: ', { link: d.consoleUrl }]] : []),
          ]),
    ],
  }),
  password_reset: (d, link) => ({
    subject: 'Password reset',
    lines:
      d.mode === 'link' && link
        ? [
            [`A password reset was requested for the account ${who(d)}.`],
            ['Set a new password with this link (valid until ', formatTime(d.expiresAt), ', once):'],
            [{ link }],
            ['If you did not ask for it, ignore this mail: the password stays as it is.'],
          ]
        : d.mode === 'external'
          ? [
              [`A password reset was requested for the account ${who(d)}.`],
              [
                d.source === 'ldap'
                  ? "This account's password is kept in the corporate directory (LDAP): " +
                    'change it there, or ask your help desk.'
                  : 'This account logs in through an external identity provider (OIDC): reset the password there.',
              ],
            ]
          : [
              [`A password reset was requested for the account ${who(d)}.`],
              ['The account is blocked, so its password cannot be reset: ask your administrator.'],
            ],
  }),
  new_device: (d) => ({
    subject: 'A login to your account from a new device',
    lines: [
      [`On ${formatTime(d.at)} someone logged in to the account ${who(d)} from a device or browser not used before.`],
      [`Address: ${d.address || 'unknown'}. Browser and system: ${clientLine(d, 'not recognised')}.`],
      ['If it was you, there is nothing to do.'],
      [
        'If it was not you, change your password at once and sign out everywhere',
        ...(d.consoleUrl ? [' in the console: ', { link: d.consoleUrl }] : ['.']),
      ],
    ],
  }),
  passkey_changed: (d) => ({
    subject: d.change === 'removed' ? 'A passkey was removed from your account' : 'A passkey was added to your account',
    lines: [
      [
        d.change === 'removed'
          ? `On ${formatTime(d.at)} the passkey "${d.name ?? ''}" was removed from the account ${who(d)}.`
          : `On ${formatTime(d.at)} the passkey "${d.name ?? ''}" was added to the account ${who(d)}: ` +
            'it signs in without the password.',
      ],
      ["The account's other sessions were ended."],
      ['If it was not you, tell your administrator at once.'],
    ],
  }),
  second_factor_changed: (d) => ({
    subject: d.change === 'added' ? 'A second factor was added to your account' : 'A second factor was removed',
    lines: [
      [
        `On ${formatTime(d.at)} a second sign-in factor was ${d.change === 'added' ? 'added to' : 'removed from'} ` +
          `the account ${who(d)}${byEn(d.by)}; its other sessions were ended.`,
      ],
      ['If it was not you, tell your administrator at once.'],
    ],
  }),
  webhook_disabled: (d) => ({
    subject: 'A webhook subscription was disabled',
    lines: [
      [
        `On ${formatTime(d.at)} the service disabled the webhook subscription ${d.url ?? ''}: ` +
          (d.reason === 'gone' ? 'its receiver answered 410 Gone.' : 'its deliveries failed for 5 days.'),
      ],
      ['No events are sent to it any more. Check the receiver, then enable the subscription again.'],
    ],
  }),
};

function byEn(by: string | undefined): string {
  if (by === 'admin') return ' by an administrator';
  if (by === 'operator') return ' by the service operator';
  if (by === 'link') return ' with a password-reset link';
  return '';
}

const TEMPLATES: Record<Language, Record<NotificationKind, Texts>> = { ru: RU, en: EN };

/** The greeting line of a mail. */
function greeting(language: Language, d: TemplateData): string {
  const name = d.displayName?.trim() || d.login || '';
  if (language === 'ru') return name ? `Здравствуйте, ${name}!` : 'Здравствуйте!';
  return name ? `Hello ${name},` : 'Hello,';
}

const SIGNATURE: Record<Language, string> = {
  ru: 'Это письмо отправлено автоматически, отвечать на него не нужно.',
  en: 'This mail was sent automatically; there is no need to answer it.',
};

/** Renders a kind's mail in `language`, with `link` (a single-use link) where the kind shows one. */
export function renderMail(
  kind: NotificationKind,
  language: Language,
  data: TemplateData,
  link: string | null,
): RenderedMail {
  const { subject, lines } = TEMPLATES[language][kind](data, link);
  const all: Lines = [[greeting(language, data)], ...lines, [SIGNATURE[language]]];
  const text = all.map((parts) => parts.map((p) => (typeof p === 'string' ? p : p.link)).join('')).join('\n\n') + '\n';
  const anchor = (link: string) => `<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>`;
  const part = (p: Part) => (typeof p === 'string' ? escapeHtml(p) : anchor(p.link));
  const body = all.map((parts) => `<p>${parts.map(part).join('')}</p>`).join('\n');
  const head = `<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`;
  const html = `<!doctype html>\n<html lang="${language}">${head}\n<body>\n${body}\n</body></html>\n`;
  return { subject, text, html };
}
