/**
 * The settings page's words (docs/console.md, "Settings"): a human label and a description of each
 * UI-editable variable, and the names of the groups and types, in both languages. The registry
 * (config/registry.ts) keeps one English description for the API, docs/configuration.md and the
 * environment; the console's translations live here, with its other texts, so that a translator
 * edits one kind of file. A variable missing here falls back to its name and the API's description.
 */
import { addTexts } from './texts.js';

/** [label, description] of each variable in English. */
const EN: Record<string, [string, string]> = {
  LOG_LEVEL: ['Log level', 'How much the service writes to its log.'],
  ACCESS_LOG_LEVEL: ['Access log level', 'How much is logged about each API request.'],
  NOTIFICATION_EXPIRATION: ['Mail history kept (days)', 'Days the history of sent mails is kept.'],
  AUDIT_CRUD_USER_LOGS_PATTERN: ["Users' changes log index", 'Log store index pattern of the changes users make.'],
  AUDIT_CRUD_ADMIN_LOGS_PATTERN: [
    "Administrators' changes log index",
    'Log store index pattern of the changes administrators make.',
  ],
  AUDIT_EXT_SERVICE_ACCESS_PATTERN: [
    'Corporate services access log index',
    'Log store index pattern of access to corporate services.',
  ],
  AUDIT_API_ACCESS_PATTERN: ['API access log index', 'Log store index pattern of access to the API.'],
  AUDIT_USER_ACTIVITY_PATTERN: [
    'User activity log index',
    'Log store index pattern of sign-ins, sign-outs and sessions.',
  ],
  AUDIT_DATA_LIFECYCLE_PATTERN: ['Data lifecycle log index', 'Log store index pattern of the data lifecycle log.'],
  LOGSTORE_URLS: [
    'Log store addresses',
    'Addresses of the log store nodes, separated by semicolons. Without one, audit events stay in this database.',
  ],
  LOGSTORE_TIMEOUT: ['Log store timeout (seconds)', 'How long a request to the log store may take.'],
  DEFAULT_FRONTEND_URL: ['Page after sign-in', 'Where a user goes after signing in, unless the request names a page.'],
  DEFAULT_FRONTEND_MERGE_URL: [
    'Page to link accounts',
    'Where a user goes when a directory or provider login matches a local account.',
  ],
  LDAP_SERVER_CONNECT_TIMEOUT: ['Directory connect timeout (seconds)', 'How long connecting to a directory may take.'],
  LDAP_SERVER_SEARCHING_TIMEOUT: ['Directory search timeout (seconds)', 'How long a search in a directory may take.'],
  DIRECTORY_SIGNATURE: ['Directory signature', 'Object identifier that marks a directory as Active Directory.'],
  AUTH_FAILED_TIMEOUT_MIN: [
    'Failed sign-in window (minutes)',
    'Failed sign-ins are counted within this many minutes; a lock lasts as long.',
  ],
  AUTH_FAILED_COUNT: ['Failed sign-ins before a lock', 'Failed sign-ins within the window that lock the account.'],
  AUTH_SESSIONS_MAX_COUNT: ['Most sessions of a user', 'No account may have more sessions at once.'],
  AUTH_SESSIONS_DEFAULT_COUNT: [
    'Sessions of a user by default',
    'Sessions an account may have at once unless its own limit says otherwise.',
  ],
  USER_INACTIVE_TIMEOUT_DAY: ['Block after inactivity (days)', 'An account unused this many days is blocked.'],
  USER_LOGIN_REUSE_DAY: ['Login reuse after (days)', 'Days before the login of a deleted account may be given again.'],
  USER_PASSWORD_MIN_LENGTH: ['Shortest password', 'Fewest characters a password may have.'],
  USER_PASSWORD_MAX_LENGTH: ['Longest password', 'Most characters a password may have.'],
  USER_PASSWORD_SPECIAL_SYM: ['Special characters', 'Characters that count as special in a password, each alone.'],
  USER_PASSWORD_SPECIAL_SYM_MIN: ['Special characters needed', 'Fewest special characters a password must contain.'],
  USER_PASSWORD_DIGITAL_MIN: ['Digits needed', 'Fewest digits a password must contain.'],
  USER_PASSWORD_LOWER_MIN: ['Lower-case letters needed', 'Fewest lower-case letters a password must contain.'],
  USER_PASSWORD_UPPER_MIN: ['Upper-case letters needed', 'Fewest upper-case letters a password must contain.'],
  USER_PASSWORD_HISTORY_DEPTH: ['Passwords remembered', 'How many earlier passwords may not be used again.'],
  USER_PASSWORD_EXPIRATION_DAY: ['Password lifetime (days)', 'Days until a password must be changed; 0: never.'],
  EMAIL_HOST: ['Mail server', 'Host name of the mail server that sends the service’s mail.'],
  EMAIL_USE_TLS: ['Use TLS', 'Whether the connection to the mail server is encrypted.'],
  EMAIL_PORT: ['Mail server port', 'Port of the mail server.'],
  EMAIL_FROM: ['Sender', 'Address (or name and address) the mails come from.'],
  EMAIL_HOST_USER: ['Mail server user', 'User name for signing in to the mail server; empty: none.'],
  EMAIL_HOST_PASSWORD: ['Mail server password', 'Password for signing in to the mail server.'],
  PROFILE: ['Profiling', 'Whether performance profiles are sent to error tracking.'],
  AUDIT_LOCAL_RETENTION_DAYS: [
    'Audit events kept here (days)',
    'Days audit events stay in this database while no log store is configured.',
  ],
  AUDIT_LOCAL_MAX_MB: [
    'Audit events kept here (MB)',
    'Megabytes audit events may take in this database while no log store is configured; beyond, the oldest go.',
  ],
  MFA_REQUIRED_ROLES: [
    'Roles that need a second factor',
    'Accounts of these roles must add a second factor before doing anything else.',
  ],
  GROUP_ROLES: [
    'Roles from groups',
    'Directory or provider groups whose members become auditors or administrators at each sign-in, ' +
      'as group=admin or group=auditor.',
  ],
  LDAP_GROUPS_REFRESH_MIN: [
    'LDAP groups re-read every (minutes)',
    "Minutes between two reads of an LDAP account's groups between its sign-ins; a re-read only takes " +
      'groups away. 0: at sign-in only.',
  ],
  TOKEN_DEFAULT_LIFETIME_DAYS: [
    'API token lifetime by default (days)',
    'Days an API token lives when whoever makes it names no lifetime (at most the maximum below).',
  ],
  TOKEN_MAX_LIFETIME_DAYS: [
    'Longest API token lifetime (days)',
    'The longest lifetime a new API token may be given; tokens made before keep theirs.',
  ],
  TOKEN_NO_EXPIRY_ALLOWED: ['API tokens that never expire', 'Whether an API token may be made without an end.'],
  TOKEN_EXPIRY_NOTICE_DAY: [
    'Mail before an API token expires (days)',
    'Days before an API token expires when its owner is told by mail, once per token. 0: never.',
  ],
  MFA_STEP_UP_MIN: [
    'Second-factor check lasts (minutes)',
    'Minutes a second-factor check lets a session do sensitive operations.',
  ],
  NEW_DEVICE_MAIL: ['Mail on a new device', 'Mail the owner when someone signs in from a browser not seen before.'],
  REVOCATION_CHECK_SEC: [
    'Revocation check interval (seconds)',
    'How long a server trusts its last check of a session or API token: a sign-out, block or revocation ' +
      'holds at once where it was made and within this time everywhere else (0: every request checks).',
  ],
};

/** [label, description] of each variable in Russian. */
const RU: Record<keyof typeof EN, [string, string]> = {
  LOG_LEVEL: ['Уровень журнала', 'Насколько подробно сервис пишет журнал.'],
  ACCESS_LOG_LEVEL: ['Уровень журнала доступа', 'Насколько подробно записывается каждый запрос к API.'],
  NOTIFICATION_EXPIRATION: ['Хранить историю писем (дней)', 'Сколько дней хранится история отправленных писем.'],
  AUDIT_CRUD_USER_LOGS_PATTERN: [
    'Индекс изменений пользователей',
    'Шаблон индекса хранилища журналов для изменений, сделанных пользователями.',
  ],
  AUDIT_CRUD_ADMIN_LOGS_PATTERN: [
    'Индекс изменений администраторов',
    'Шаблон индекса хранилища журналов для изменений, сделанных администраторами.',
  ],
  AUDIT_EXT_SERVICE_ACCESS_PATTERN: [
    'Индекс доступа к корпоративным сервисам',
    'Шаблон индекса хранилища журналов для доступа к корпоративным сервисам.',
  ],
  AUDIT_API_ACCESS_PATTERN: ['Индекс доступа к API', 'Шаблон индекса хранилища журналов для доступа к API.'],
  AUDIT_USER_ACTIVITY_PATTERN: [
    'Индекс действий пользователей',
    'Шаблон индекса хранилища журналов для входов, выходов и сеансов.',
  ],
  AUDIT_DATA_LIFECYCLE_PATTERN: [
    'Индекс жизненного цикла данных',
    'Шаблон индекса хранилища журналов для жизненного цикла данных.',
  ],
  LOGSTORE_URLS: [
    'Адреса хранилища журналов',
    'Адреса узлов хранилища журналов через точку с запятой. Без них события аудита хранятся в этой базе данных.',
  ],
  LOGSTORE_TIMEOUT: ['Ожидание хранилища журналов (секунд)', 'Сколько может длиться запрос к хранилищу журналов.'],
  DEFAULT_FRONTEND_URL: [
    'Страница после входа',
    'Куда попадает пользователь после входа, если запрос не указал страницу.',
  ],
  DEFAULT_FRONTEND_MERGE_URL: [
    'Страница связывания учётных записей',
    'Куда попадает пользователь, если вход через каталог или поставщика совпал с локальной учётной записью.',
  ],
  LDAP_SERVER_CONNECT_TIMEOUT: [
    'Ожидание подключения к каталогу (секунд)',
    'Сколько может длиться подключение к каталогу.',
  ],
  LDAP_SERVER_SEARCHING_TIMEOUT: ['Ожидание поиска в каталоге (секунд)', 'Сколько может длиться поиск в каталоге.'],
  DIRECTORY_SIGNATURE: [
    'Признак каталога',
    'Идентификатор объекта, по которому каталог распознаётся как Active Directory.',
  ],
  AUTH_FAILED_TIMEOUT_MIN: [
    'Окно неудачных входов (минут)',
    'Неудачные входы считаются за столько минут; столько же длится блокировка.',
  ],
  AUTH_FAILED_COUNT: ['Неудачных входов до блокировки', 'Сколько неудачных входов за окно блокирует учётную запись.'],
  AUTH_SESSIONS_MAX_COUNT: ['Наибольшее число сеансов', 'Больше сеансов одновременно не может быть ни у кого.'],
  AUTH_SESSIONS_DEFAULT_COUNT: [
    'Сеансов по умолчанию',
    'Сколько сеансов одновременно может быть у учётной записи без собственного предела.',
  ],
  USER_INACTIVE_TIMEOUT_DAY: [
    'Блокировка при бездействии (дней)',
    'Учётная запись, не использованная столько дней, блокируется.',
  ],
  USER_LOGIN_REUSE_DAY: [
    'Повторное использование логина (дней)',
    'Через сколько дней логин удалённой учётной записи можно выдать снова.',
  ],
  USER_PASSWORD_MIN_LENGTH: ['Наименьшая длина пароля', 'Сколько символов должно быть в пароле хотя бы.'],
  USER_PASSWORD_MAX_LENGTH: ['Наибольшая длина пароля', 'Больше символов в пароле быть не может.'],
  USER_PASSWORD_SPECIAL_SYM: ['Спецсимволы', 'Символы, которые считаются специальными в пароле, по одному.'],
  USER_PASSWORD_SPECIAL_SYM_MIN: ['Нужно спецсимволов', 'Сколько спецсимволов должно быть в пароле хотя бы.'],
  USER_PASSWORD_DIGITAL_MIN: ['Нужно цифр', 'Сколько цифр должно быть в пароле хотя бы.'],
  USER_PASSWORD_LOWER_MIN: ['Нужно строчных букв', 'Сколько строчных букв должно быть в пароле хотя бы.'],
  USER_PASSWORD_UPPER_MIN: ['Нужно заглавных букв', 'Сколько заглавных букв должно быть в пароле хотя бы.'],
  USER_PASSWORD_HISTORY_DEPTH: ['Запоминаемые пароли', 'Сколько прежних паролей нельзя использовать снова.'],
  USER_PASSWORD_EXPIRATION_DAY: [
    'Срок действия пароля (дней)',
    'Через сколько дней пароль нужно сменить; 0 — никогда.',
  ],
  EMAIL_HOST: ['Почтовый сервер', 'Имя почтового сервера, через который сервис отправляет письма.'],
  EMAIL_USE_TLS: ['Использовать TLS', 'Шифровать ли подключение к почтовому серверу.'],
  EMAIL_PORT: ['Порт почтового сервера', 'Порт почтового сервера.'],
  EMAIL_FROM: ['Отправитель', 'Адрес (или имя и адрес), от которого приходят письма.'],
  EMAIL_HOST_USER: ['Пользователь почтового сервера', 'Имя для входа на почтовый сервер; пусто — без входа.'],
  EMAIL_HOST_PASSWORD: ['Пароль почтового сервера', 'Пароль для входа на почтовый сервер.'],
  PROFILE: ['Профилирование', 'Отправлять ли профили производительности в систему отслеживания ошибок.'],
  AUDIT_LOCAL_RETENTION_DAYS: [
    'Хранить события аудита здесь (дней)',
    'Сколько дней события аудита хранятся в этой базе данных, пока хранилище журналов не настроено.',
  ],
  AUDIT_LOCAL_MAX_MB: [
    'Хранить события аудита здесь (МБ)',
    'Сколько мегабайт события аудита могут занимать в этой базе, пока хранилище журналов не настроено; ' +
      'сверх того удаляются самые старые.',
  ],
  MFA_REQUIRED_ROLES: [
    'Роли, которым нужен второй фактор',
    'Учётные записи этих ролей должны добавить второй фактор, прежде чем делать что-либо ещё.',
  ],
  GROUP_ROLES: [
    'Роли по группам',
    'Группы каталога или провайдера, участники которых при каждом входе становятся аудиторами или ' +
      'администраторами, в виде группа=admin или группа=auditor.',
  ],
  LDAP_GROUPS_REFRESH_MIN: [
    'Перечитывать группы LDAP каждые (минут)',
    'Сколько минут между двумя чтениями групп учётной записи LDAP между её входами; повторное чтение ' +
      'только убирает группы. 0: только при входе.',
  ],
  TOKEN_DEFAULT_LIFETIME_DAYS: [
    'Срок API-токена по умолчанию (дней)',
    'Сколько дней живёт API-токен, если при выпуске срок не указан (не больше наибольшего срока ниже).',
  ],
  TOKEN_MAX_LIFETIME_DAYS: [
    'Наибольший срок API-токена (дней)',
    'Наибольший срок, который можно дать новому API-токену; выпущенные раньше сохраняют свой.',
  ],
  TOKEN_NO_EXPIRY_ALLOWED: ['Бессрочные API-токены', 'Можно ли выпустить API-токен без срока действия.'],
  TOKEN_EXPIRY_NOTICE_DAY: [
    'Письмо до истечения API-токена (дней)',
    'За сколько дней до истечения API-токена владельцу пишут, один раз на токен. 0: никогда.',
  ],
  MFA_STEP_UP_MIN: [
    'Действие проверки второго фактора (минут)',
    'Сколько минут проверка второго фактора разрешает сеансу важные операции.',
  ],
  NEW_DEVICE_MAIL: [
    'Письмо о новом устройстве',
    'Писать владельцу, когда вход выполнен из браузера, которого ещё не было.',
  ],
  REVOCATION_CHECK_SEC: [
    'Интервал проверки отзыва (секунд)',
    'Сколько сервер доверяет своей последней проверке сеанса или токена API: выход, блокировка или отзыв ' +
      'действуют сразу там, где сделаны, и в пределах этого времени везде (0: проверяет каждый запрос).',
  ],
};

const words = (dict: Record<string, [string, string]>) =>
  Object.fromEntries(
    Object.entries(dict).flatMap(([name, [label, description]]) => [
      [`setting.${name}.label`, label],
      [`setting.${name}.description`, description],
    ]),
  );

const en = {
  ...words(EN),
  'settings.index': 'Groups of settings',
  'settings.group.API': 'API and audit log',
  'settings.group.Security': 'Security',
  'settings.group.Mail': 'Mail',
  'settings.group.Error tracking': 'Error tracking',
  'settings.group.Deployment': 'Deployment',
  'settings.typeName.string': 'text',
  'settings.typeName.integer': 'whole number',
  'settings.typeName.number': 'number',
  'settings.typeName.boolean': 'yes or no',
  'settings.typeName.list': 'list',
  'settings.typeName.enumeration': 'one of the values',
  'settings.range': 'from {min} to {max}',
  'settings.accepted.USER_PASSWORD_SPECIAL_SYM': 'single characters',
  'settings.accepted.MFA_REQUIRED_ROLES': 'roles: admin, auditor, user',
  'settings.accepted.indexPattern':
    'an index pattern starting with svc-sec- (then lower-case letters, digits, . _ + - and *)',
  'settings.accepted.LOGSTORE_URLS': 'http(s) addresses separated by ";"',
  'settings.accepted.url': 'an absolute http(s) address',
  'settings.accepted.DIRECTORY_SIGNATURE': 'an OID such as 1.2.840.113556.1.4.800',
  'settings.accepted.nonEmpty': 'any text, not empty',
  'settings.accepted.string': 'any text',
};

const ru: Record<keyof typeof en, string> = {
  ...words(RU),
  'settings.index': 'Группы настроек',
  'settings.group.API': 'API и журнал аудита',
  'settings.group.Security': 'Безопасность',
  'settings.group.Mail': 'Почта',
  'settings.group.Error tracking': 'Отслеживание ошибок',
  'settings.group.Deployment': 'Развёртывание',
  'settings.typeName.string': 'текст',
  'settings.typeName.integer': 'целое число',
  'settings.typeName.number': 'число',
  'settings.typeName.boolean': 'да или нет',
  'settings.typeName.list': 'список',
  'settings.typeName.enumeration': 'одно из значений',
  'settings.range': 'от {min} до {max}',
  'settings.accepted.USER_PASSWORD_SPECIAL_SYM': 'отдельные символы',
  'settings.accepted.MFA_REQUIRED_ROLES': 'роли: admin, auditor, user',
  'settings.accepted.indexPattern':
    'шаблон индекса, начинающийся с svc-sec- (дальше строчные латинские буквы, цифры, . _ + - и *)',
  'settings.accepted.LOGSTORE_URLS': 'адреса http(s) через ";"',
  'settings.accepted.url': 'полный адрес http(s)',
  'settings.accepted.DIRECTORY_SIGNATURE': 'OID, например 1.2.840.113556.1.4.800',
  'settings.accepted.nonEmpty': 'любой непустой текст',
  'settings.accepted.string': 'любой текст',
};

addTexts({ en, ru });
