/**
 * Texts of the console's shared widgets (docs/console.md, "Layout and words"): confirmations of
 * destructive actions, clients (User-Agents) in words, refusals in words, the create-user policy.
 * Registered with `addTexts` at import (console/i18n.ts imports it, so every page has them).
 */
import { addTexts } from './texts.js';

const en = {
  'confirm.cancel': 'Cancel',
  'confirm.endSession': 'End the session started {date}? That browser is signed out.',
  'confirm.endAll': 'End all your sessions? You are signed out everywhere, here too.',
  'confirm.revokeToken': 'Revoke the token "{name}"? Programs using it are refused from now on.',
  'confirm.block': 'Block {login}? Their sessions and API tokens end, and they cannot sign in until unblocked.',
  'agent.on': '{browser} on {system}',
  'agent.unknown': 'unknown',
  'tokens.secretGone': 'The token "{name}" is revoked: its secret is removed from the page.',
  'policy.refused': 'The password does not meet these rules:',
  'signin.reset': 'Your password was reset by an administrator. Choose a new one to sign in.',
  'password.resetIntro':
    'Your password was reset by an administrator. Enter your login, the password you were given and a new one.',
  'password.initialIntro':
    'Welcome. Choose your own password: enter your login, the password you were given and a new one.',
  'signin.changeIntro.expired': 'Your password has expired. Choose a new one to sign in.',
  'signin.changeIntro.reset': 'Your password was reset by an administrator. Choose a new one to sign in.',
  'signin.changeIntro.initial': 'Welcome. Choose your own password to sign in.',
  'signin.changed': 'Your password is changed. Signing in…',
} as const;

const ru: Record<keyof typeof en, string> = {
  'confirm.cancel': 'Отмена',
  'confirm.endSession': 'Завершить сеанс, начатый {date}? В том браузере потребуется войти заново.',
  'confirm.endAll': 'Завершить все ваши сеансы? Вы выйдете везде, и здесь тоже.',
  'confirm.revokeToken': 'Отозвать токен «{name}»? Программы, которые его используют, больше не получат доступ.',
  'confirm.block':
    'Заблокировать {login}? Сеансы и API-токены пользователя завершатся, войти нельзя будет до разблокировки.',
  'agent.on': '{browser}, {system}',
  'agent.unknown': 'неизвестно',
  'tokens.secretGone': 'Токен «{name}» отозван: его секрет убран со страницы.',
  'policy.refused': 'Пароль не соответствует правилам:',
  'signin.reset': 'Администратор сбросил ваш пароль. Задайте новый, чтобы войти.',
  'password.resetIntro': 'Администратор сбросил ваш пароль. Введите логин, выданный пароль и новый пароль.',
  'password.initialIntro': 'Добро пожаловать. Выберите свой пароль: введите логин, выданный пароль и новый пароль.',
  'signin.changeIntro.expired': 'Срок действия пароля истёк. Выберите новый, чтобы войти.',
  'signin.changeIntro.reset': 'Администратор сбросил ваш пароль. Выберите новый, чтобы войти.',
  'signin.changeIntro.initial': 'Добро пожаловать. Выберите свой пароль, чтобы войти.',
  'signin.changed': 'Пароль изменён. Выполняется вход…',
};

addTexts({ en, ru });
