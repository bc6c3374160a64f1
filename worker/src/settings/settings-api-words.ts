/**
 * The words of /v3/settings in the API description (routes.ts): its summaries and descriptions. The document is
 * generated at build time on the Node host (architecture.md §10), so the edge script needs none of them:
 * wrangler.toml's [alias] replaces this module there with worker/edge-aliases/settings-api-words.js (empty
 * strings), as for the sessions' words (docs/performance.md, "The edge bundle").
 */
export const W: Record<string, string> = {
  s1: 'The UI-editable settings',
  d1:
    'Every variable of the groups API, Security, Mail and Error tracking (and AUTH_NEW_DEVICE_MAIL) with its ' +
    'effective value, source (ui, ' +
    'env, default), type, default and bounds. Secrets are never returned: only whether they are set.',
  s2: 'Change one or many settings, atomically',
  d2:
    'Secrets (EMAIL_HOST_PASSWORD) are stored encrypted with AUTH_SECRETS_ENCRYPTION_KEY or SESSION_SECRET_KEY ' +
    '(503 while neither is set: an edge host; the Node host keeps a generated key). Every value is checked ' +
    '(type, bounds) and so is the combination in force after ' +
    'the change (saved, environment and default values): the pairs min ≤ max, and a password policy some ' +
    'password can satisfy (the minimum counts of special characters, digits, lower- and upper-case letters ' +
    'together at most USER_PASSWORD_MAX_LENGTH; no USER_PASSWORD_SPECIAL_SYM_MIN above 0 with an empty ' +
    'USER_PASSWORD_SPECIAL_SYM). One bad value or conflict refuses the whole request with 422 naming each bad ' +
    'variable, and nothing changes. Applies at once on this instance and on every other within 5 seconds ' +
    '(the error-tracking variable PROFILE after a restart).\n\nThe mail password follows no new server: a ' +
    'change of EMAIL_HOST or EMAIL_PORT, or ' +
    'EMAIL_USE_TLS turned off, needs EMAIL_HOST_PASSWORD in the same request while a user and password are set ' +
    '(else 422 naming EMAIL_HOST_PASSWORD); EMAIL_USE_TLS cannot be off while they are set (credentials never go ' +
    'without TLS).',
  s3: 'Reset a setting to its environment or default value',
  d3:
    'Removes the value saved through the settings API. 422 naming the conflicting settings when the environment ' +
    'or default value would not fit the others (min ≤ max, a satisfiable password policy): change those first. ' +
    'The mail password follows no new server (as for PATCH): a reset that would send it elsewhere, send the ' +
    "environment's password to a server set here, or turn TLS off while credentials are set is refused with 422.",
};
