/** The second step of a session login: /v3/login/second-factor (docs/security-mfa.md). */
import { SessionResponse, answerLogin, formAndJson } from './route-common.js';
import { publicRoute } from '../auth/protected-route.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { groupNamesOf } from '../accounts/model.js';
import { readBody } from '../http/body.js';
import { setAuthCookie } from '../http/cookies.js';
import { refuseCrossSiteLogin } from '../http/csrf.js';
import { setDeviceCookie } from './device-cookie.js';
import {
  SECOND_STEP_PATH,
  SecondStepBody,
  clearPendingCookie,
  pendingOfRequest,
  secondFactorInput,
} from '../mfa/answers.js';
import {
  checkSecondFactor,
  completePendingLogin,
  pendingSource,
  REPLAY_DESCRIPTION,
  secondStepPlan,
} from '../mfa/second-step.js';

const secondStep = publicRoute({
  method: 'post',
  operationId: 'loginSecondStep',
  path: SECOND_STEP_PATH,
  tags: ['auths'],
  summary: 'The second step of a login: a TOTP code or a recovery code opens the session',
  description: [
    'JSON or an HTML form: the `pendingToken` of the 401 SECOND_FACTOR_REQUIRED of /v3/login or /v3/login/union ' +
      '(omitted: the cookie `auth_pending_login`), and exactly one of `code` (TOTP, 6 digits) and `recoveryCode`. ' +
      'Opens the session exactly as the password login would (cookie, device cookie, events) and clears the ' +
      'pending cookie. A pending login completes at most one login, within 5 minutes (docs/security-mfa.md).',
    'A wrong or older code: 401 INVALID_CREDENTIALS, counted like a wrong password of the account (the ' +
      'same restriction: 401 ACCOUNT_LOCKED, 429 ADDRESS_THROTTLED). ' +
      REPLAY_DESCRIPTION +
      ' A missing, expired, used or forged pending ' +
      'login: 401 UNAUTHENTICATED. Neither or both of code and recoveryCode: 422. Any role.',
  ].join('\n\n'),
  request: { body: { required: false, content: formAndJson(SecondStepBody) } },
  responses: {
    200: { description: 'logged in', content: { 'application/json': { schema: SessionResponse } } },
    303: { description: 'form post: to the front end' },
    ...problemResponses(400, 401, 403, 415, 422, 429),
  },
});

/** Registers the second step of a session login (after /v3/login/union, before /v3/oauth_login). */
export function registerSecondStep(app: App): void {
  app.openapi(secondStep, async (c) =>
    answerLogin(c, async () => {
      refuseCrossSiteLogin(c);
      const body = await readBody(c, SecondStepBody);
      const input = secondFactorInput(body);
      const scope = c.var.scope;
      const pending = await pendingOfRequest(c, body.pendingToken);
      const plan = secondStepPlan(scope, pending.throttleKey, pending.device);
      const who = { id: pending.userId, login: pending.login };
      const { success } = await checkSecondFactor(scope, who, plan, input, 'login', pendingSource(pending));
      const done = await completePendingLogin(scope, pending, success);
      clearPendingCookie(c);
      setAuthCookie(c, done.token, done.session.expiresAt);
      if (done.device) await setDeviceCookie(c, scope, done.user.id, done.device);
      c.set('principal', { user: done.user, method: 'session', groups: groupNamesOf(done.user) });
      return { session: done.session, token: done.token, next: body.next };
    }),
  );
}
