/**
 * Texts of the second-factor pages and steps (docs/console.md, "Second factors"): the security page,
 * the second step of sign-in, the step-up dialog and an administrator's view of a user's factors.
 * Registered with `addTexts` at import: imported by security-pages.ts, admin-pages.ts and their scripts.
 */
import { addTexts } from './texts.js';

const en = {
  'nav.security': 'Security',
  'secrets.noKey':
    'This service cannot store secrets: it has no key to seal them with. Until an administrator sets ' +
    'AUTH_SECRETS_ENCRYPTION_KEY in its environment, no authenticator app can be set up here and no LDAP ' +
    'service password or OIDC client secret can be saved.',
  'security.title': 'Security',
  'security.intro':
    'A second factor protects your account when your password is known to someone else: after the password, ' +
    'sign-in asks for a code from an authenticator app. Adding or removing one ends your other sessions.',
  'security.enrolRequired':
    'Your role must use a second factor. Set up an authenticator app below: until then, nothing else in ' +
    'the console is available.',
  'security.totpTitle': 'Authenticator app',
  'security.totpNone': 'No authenticator app is set up.',
  'security.totpOn': 'An authenticator app is set up (since {date}; last used: {used}).',
  'security.totpPending': 'A set-up was started and not confirmed: start again to get a new QR code.',
  'security.totpStart': 'Set up an authenticator app',
  'security.totpScan':
    'Scan the QR code with your authenticator app, or type the key below. It is shown only now. Then type ' +
    'the 6-digit code the app shows.',
  'security.qr': 'QR code of the authenticator key',
  'security.secret': 'Key for manual entry',
  'security.code': 'Code from the app (6 digits)',
  'security.confirm': 'Confirm',
  'security.totpAdded': 'The authenticator app is set up: sign-in now asks for its code.',
  'security.totpRemove': 'Remove the authenticator app',
  'security.totpRemoveConfirm':
    'Remove the authenticator app? Sign-in will then need only your password. Press again to remove it.',
  'security.totpRemoveYes': 'Yes, remove it',
  'security.totpRemoved': 'The authenticator app is removed.',
  'security.cancel': 'Cancel',
  'security.codesTitle': 'Recovery codes',
  'security.codesIntro':
    'Each recovery code signs you in once instead of an app code, when you have lost your phone. Keep them ' +
    'somewhere safe.',
  'security.codesLeft': 'Recovery codes left: {n}.',
  'security.codesLow': 'Few recovery codes are left ({n}): generate new ones.',
  'security.codesNeedFactor': 'Set up an authenticator app first: recovery codes stand in for it.',
  'security.codesGenerate': 'Generate recovery codes',
  'security.codesRegenerate': 'Generate new recovery codes (the old ones stop working)',
  'security.codesShown': 'Your new recovery codes. They are shown only now: copy or download them.',
  'security.codesList': 'Recovery codes',
  'security.codesCopy': 'Copy the codes',
  'security.codesCopied': 'Copied.',
  'security.codesDownload': 'Download as a text file',
  'security.passkeysTitle': 'Passkeys',
  'security.passkeysCount': 'Passkeys: {n}.',
  'security.passkeysManage': 'Manage passkeys',
  'second.title': 'Second step',
  'second.intro': 'Your password is right. Type the code from your authenticator app, or one of your recovery codes.',
  'second.code': 'Code (6 digits) or recovery code',
  'second.submit': 'Continue',
  'second.restart': 'Start again',
  'second.passkey': 'Use a passkey instead',
  'second.invalid': 'The code was not accepted.',
  'second.replayed': 'This code was already used: wait for the next one ({seconds} s).',
  'second.expired': 'The sign-in took too long: sign in again with your password.',
  'stepup.title': 'Confirm it is you',
  'stepup.intro': 'This change needs a fresh code from your authenticator app (or a recovery code).',
  'stepup.code': 'Code (6 digits) or recovery code',
  'stepup.submit': 'Confirm',
  'stepup.cancel': 'Cancel',
  'stepup.invalid': 'The code was not accepted.',
  'stepup.cancelled': 'Not done: it needs a second-factor confirmation.',
  'stepup.reauth': 'Setting up a first second factor needs a recent sign-in: sign out, sign in again, then set it up.',
  'userfactors.title': 'Second factors',
  'userfactors.none': 'No second factor.',
  'userfactors.caption': 'Second factors of the user',
  'userfactors.kind': 'Kind',
  'userfactors.confirmed': 'Set up',
  'userfactors.lastUsed': 'Last used',
  'userfactors.kind.totp': 'authenticator app (TOTP)',
  'userfactors.never': 'never',
  'userfactors.codesLeft': 'Recovery codes left: {n}.',
  'userfactors.remove': 'Remove all second factors',
  'userfactors.removeConfirm':
    'Remove every second factor and recovery code of {login}? Their sessions end and they are told by mail; ' +
    'they then sign in with the password alone.',
  'userfactors.removeYes': 'Yes, remove them',
  'userfactors.removed': 'The second factors are removed.',
};

const ru: Record<keyof typeof en, string> = {
  'nav.security': 'Безопасность',
  'secrets.noKey':
    'Сервис не может хранить секреты: у него нет ключа для их шифрования. Пока администратор не задаст ' +
    'AUTH_SECRETS_ENCRYPTION_KEY в его окружении, здесь нельзя настроить приложение-аутентификатор и нельзя ' +
    'сохранить пароль служебной учётной записи LDAP или секрет клиента OIDC.',
  'security.title': 'Безопасность',
  'security.intro':
    'Второй фактор защищает учётную запись, если ваш пароль узнал кто-то ещё: после пароля вход требует код ' +
    'из приложения-аутентификатора. Добавление или удаление фактора завершает ваши остальные сеансы.',
  'security.enrolRequired':
    'Для вашей роли второй фактор обязателен. Настройте приложение-аутентификатор ниже: до этого остальные ' +
    'разделы консоли недоступны.',
  'security.totpTitle': 'Приложение-аутентификатор',
  'security.totpNone': 'Приложение-аутентификатор не настроено.',
  'security.totpOn': 'Приложение-аутентификатор настроено (с {date}; последнее использование: {used}).',
  'security.totpPending': 'Настройка начата и не подтверждена: начните заново, чтобы получить новый QR-код.',
  'security.totpStart': 'Настроить приложение-аутентификатор',
  'security.totpScan':
    'Отсканируйте QR-код приложением-аутентификатором или введите ключ ниже. Он показывается только сейчас. ' +
    'Затем введите 6-значный код из приложения.',
  'security.qr': 'QR-код ключа аутентификатора',
  'security.secret': 'Ключ для ручного ввода',
  'security.code': 'Код из приложения (6 цифр)',
  'security.confirm': 'Подтвердить',
  'security.totpAdded': 'Приложение-аутентификатор настроено: при входе будет запрошен его код.',
  'security.totpRemove': 'Удалить приложение-аутентификатор',
  'security.totpRemoveConfirm':
    'Удалить приложение-аутентификатор? Для входа будет достаточно пароля. Нажмите ещё раз, чтобы удалить.',
  'security.totpRemoveYes': 'Да, удалить',
  'security.totpRemoved': 'Приложение-аутентификатор удалено.',
  'security.cancel': 'Отмена',
  'security.codesTitle': 'Коды восстановления',
  'security.codesIntro':
    'Каждый код восстановления один раз заменяет код из приложения, если телефон потерян. Храните их в ' +
    'надёжном месте.',
  'security.codesLeft': 'Осталось кодов восстановления: {n}.',
  'security.codesLow': 'Кодов восстановления осталось мало ({n}): создайте новые.',
  'security.codesNeedFactor': 'Сначала настройте приложение-аутентификатор: коды восстановления заменяют его.',
  'security.codesGenerate': 'Создать коды восстановления',
  'security.codesRegenerate': 'Создать новые коды восстановления (старые перестанут действовать)',
  'security.codesShown': 'Ваши новые коды восстановления. Они показываются только сейчас: скопируйте или скачайте их.',
  'security.codesList': 'Коды восстановления',
  'security.codesCopy': 'Скопировать коды',
  'security.codesCopied': 'Скопировано.',
  'security.codesDownload': 'Скачать текстовым файлом',
  'security.passkeysTitle': 'Ключи доступа',
  'security.passkeysCount': 'Ключей доступа: {n}.',
  'security.passkeysManage': 'Управление ключами доступа',
  'second.title': 'Второй шаг',
  'second.intro': 'Пароль верен. Введите код из приложения-аутентификатора или один из кодов восстановления.',
  'second.code': 'Код (6 цифр) или код восстановления',
  'second.submit': 'Продолжить',
  'second.restart': 'Начать заново',
  'second.passkey': 'Использовать ключ доступа',
  'second.invalid': 'Код не принят.',
  'second.replayed': 'Этот код уже использован: дождитесь следующего ({seconds} с).',
  'second.expired': 'Вход занял слишком много времени: войдите снова с паролем.',
  'stepup.title': 'Подтвердите, что это вы',
  'stepup.intro': 'Для этого изменения нужен свежий код из приложения-аутентификатора (или код восстановления).',
  'stepup.code': 'Код (6 цифр) или код восстановления',
  'stepup.submit': 'Подтвердить',
  'stepup.cancel': 'Отмена',
  'stepup.invalid': 'Код не принят.',
  'stepup.cancelled': 'Не выполнено: нужно подтверждение вторым фактором.',
  'stepup.reauth': 'Для настройки первого второго фактора нужен недавний вход: выйдите, войдите снова и повторите.',
  'userfactors.title': 'Вторые факторы',
  'userfactors.none': 'Второго фактора нет.',
  'userfactors.caption': 'Вторые факторы пользователя',
  'userfactors.kind': 'Вид',
  'userfactors.confirmed': 'Настроен',
  'userfactors.lastUsed': 'Последнее использование',
  'userfactors.kind.totp': 'приложение-аутентификатор (TOTP)',
  'userfactors.never': 'никогда',
  'userfactors.codesLeft': 'Осталось кодов восстановления: {n}.',
  'userfactors.remove': 'Удалить все вторые факторы',
  'userfactors.removeConfirm':
    'Удалить все вторые факторы и коды восстановления пользователя {login}? Его сеансы завершатся, ему придёт ' +
    'письмо; затем он будет входить только по паролю.',
  'userfactors.removeYes': 'Да, удалить',
  'userfactors.removed': 'Вторые факторы удалены.',
};

addTexts({ en, ru });
